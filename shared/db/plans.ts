import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import type { TransactItem } from './core/transact.js';

/** One plan per organization. `null` limits mean unlimited. */
export interface Plan {
  organizationId: string;
  /** Markups per calendar month (UTC) charged to the plan allowance. */
  markupLimit: number | null;
  /** Purchased markups drawn on after the monthly allowance is used up. */
  bundleBalance: number;
  storageLimitBytes: number | null;
  pauseCommentsEnabled: boolean;
  storageFeatureEnabled: boolean;
  modifiedAt: string;
}

/** Defaults of a new organization's plan: a modest allowance, optional features off. */
export const DEFAULT_PLAN = {
  markupLimit: 50,
  bundleBalance: 0,
  storageLimitBytes: 5 * 1024 ** 3,
  pauseCommentsEnabled: false,
  storageFeatureEnabled: false,
} as const;

export const planKey = (organizationId: string) => ({ PK: `ORG#${organizationId}`, SK: 'PLAN' });

export function defaultPlan(organizationId: string, now = new Date().toISOString()): Plan {
  return { organizationId, ...DEFAULT_PLAN, modifiedAt: now };
}

export function toPlanItem(plan: Plan): Record<string, unknown> {
  return { ...planKey(plan.organizationId), entity: 'Plan', ...plan };
}

function fromPlanItem(item: Record<string, unknown>): Plan {
  return {
    organizationId: item.organizationId as string,
    markupLimit: (item.markupLimit as number | null | undefined) ?? null,
    bundleBalance: (item.bundleBalance as number | undefined) ?? 0,
    storageLimitBytes: (item.storageLimitBytes as number | null | undefined) ?? null,
    pauseCommentsEnabled: item.pauseCommentsEnabled === true,
    storageFeatureEnabled: item.storageFeatureEnabled === true,
    modifiedAt: item.modifiedAt as string,
  };
}

/** The organization's plan; an organization without a stored plan has the defaults. */
export async function getPlan(organizationId: string): Promise<Plan> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: planKey(organizationId) }));
  return result.Item ? fromPlanItem(result.Item) : defaultPlan(organizationId);
}

export async function savePlan(plan: Plan): Promise<void> {
  await getDb().send(new PutCommand({ TableName: getConfig().tableName, Item: toPlanItem(plan) }));
}

/** Takes `count` markups from the organization's bundle, in a creation's transaction; fails its condition when fewer are left. */
export function bundleDraw(organizationId: string, count: number): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: planKey(organizationId),
      UpdateExpression: 'ADD bundleBalance :negative',
      ConditionExpression: 'bundleBalance >= :needed',
      ExpressionAttributeValues: { ':negative': -count, ':needed': count },
    },
  };
}

/** Puts `count` markups back into the organization's bundle (a negative count takes them again), unconditionally. */
export function bundleCredit(organizationId: string, count: number): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: planKey(organizationId),
      UpdateExpression: 'ADD bundleBalance :count',
      ExpressionAttributeValues: { ':count': count },
    },
  };
}
