import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { isTransactionConflict } from './core/errors.js';
import { bundleCredit, bundleDraw, type Plan } from './plans.js';
import { tryTransact, type TransactItem } from './core/transact.js';

/** A usage period: one calendar month in UTC, named `YYYY-MM`. */
export interface UsagePeriod {
  key: string;
  start: Date;
  end: Date;
}

export function usagePeriod(at: Date): UsagePeriod {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { key: start.toISOString().slice(0, 7), start, end };
}

/** Markups created in a workspace in one period: `used` from the plan allowance, `bundleUsed` from the bundle. */
export interface UsageCounters {
  used: number;
  bundleUsed: number;
}

export const usageKey = (workspaceId: string, periodKey: string) => ({ PK: `WS#${workspaceId}`, SK: `USAGE#${periodKey}` });

export async function getUsage(workspaceId: string, periodKey: string): Promise<UsageCounters> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: usageKey(workspaceId, periodKey), ConsistentRead: true }),
  );
  return { used: Number(result.Item?.used ?? 0), bundleUsed: Number(result.Item?.bundleUsed ?? 0) };
}

/** Totals (`used + bundleUsed`) of up to `months` periods before `periodKey`, newest first. */
export async function getUsageHistory(workspaceId: string, periodKey: string, months = 12): Promise<number[]> {
  const result = await getDb().send(
    new QueryCommand({
      TableName: getConfig().tableName,
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': `WS#${workspaceId}`, ':from': 'USAGE#0000-00', ':to': `USAGE#${periodKey}` },
      ScanIndexForward: false,
      Limit: months + 1,
    }),
  );
  return (result.Items ?? [])
    .filter((item) => item.SK !== `USAGE#${periodKey}`)
    .slice(0, months)
    .map((item) => Number(item.used ?? 0) + Number(item.bundleUsed ?? 0));
}

/** How many markups of a creation come from the monthly allowance and how many from the bundle. */
export interface Charge {
  fromAllowance: number;
  fromBundle: number;
}

/**
 * A charge as a markup keeps it while its conversion may still fail: the month's counter it went
 * to (`workspaceId`, `periodKey`, fixed at creation, whatever moves follow) and its split.
 */
export interface ChargeRecord extends Charge {
  workspaceId: string;
  periodKey: string;
}

/**
 * Gives a recorded charge back (`direction` -1: a conversion failed) or takes it again (+1: a dead
 * conversion reopened), counters and bundle alike. Unconditional: it must ride on a write that
 * itself happens once (the transaction that settles the conversion), which makes it exactly once.
 */
export function chargeAdjustment(charge: ChargeRecord, organizationId: string, direction: 1 | -1): TransactItem[] {
  const items: TransactItem[] = [
    {
      Update: {
        TableName: getConfig().tableName,
        Key: usageKey(charge.workspaceId, charge.periodKey),
        UpdateExpression: 'ADD used :a, bundleUsed :b SET entity = :entity, workspaceId = :ws',
        ExpressionAttributeValues: {
          ':a': direction * charge.fromAllowance,
          ':b': direction * charge.fromBundle,
          ':entity': 'Usage',
          ':ws': charge.workspaceId,
        },
      },
    },
  ];
  if (charge.fromBundle > 0) items.push(bundleCredit(organizationId, -direction * charge.fromBundle));
  return items;
}

/**
 * The counter update of a charge: `ADD used, bundleUsed` on the month's usage. Only a draw on the
 * allowance carries the guard `used <= limit - n`; a plan lowered below this month's use may still
 * create from the bundle.
 */
function usageCharge(workspaceId: string, periodKey: string, plan: Plan, charge: Charge): TransactItem {
  const guarded = plan.markupLimit !== null && charge.fromAllowance > 0;
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: usageKey(workspaceId, periodKey),
      UpdateExpression: 'ADD used :a, bundleUsed :b SET entity = :entity, workspaceId = :ws',
      ...(guarded ? { ConditionExpression: 'attribute_not_exists(used) OR used <= :max' } : {}),
      ExpressionAttributeValues: {
        ...(guarded ? { ':max': plan.markupLimit! - charge.fromAllowance } : {}),
        ':a': charge.fromAllowance,
        ':b': charge.fromBundle,
        ':entity': 'Usage',
        ':ws': workspaceId,
      },
    },
  };
}

/**
 * Writes a creation's records (`items`) and its charge, in ONE transaction: the month's usage
 * counter and, when the charge draws on it, the organization's bundle carry conditions, so
 * concurrent creations never exceed the limit and a refused creation writes nothing.
 * 'record-exists' when one of `items` failed its own condition; 'stale' when a counter's condition
 * failed or the transaction collided with another (read the counters again and retry).
 */
export async function chargeCreation(
  target: { workspaceId: string; organizationId: string; periodKey: string },
  plan: Plan,
  charge: Charge,
  items: TransactItem[],
  guards: readonly TransactItem[] = [],
): Promise<'charged' | 'record-exists' | 'guard-failed' | 'stale'> {
  const counters = [usageCharge(target.workspaceId, target.periodKey, plan, charge)];
  if (charge.fromBundle > 0) counters.push(bundleDraw(target.organizationId, charge.fromBundle));
  let failed: number[];
  try {
    failed = await tryTransact([...counters, ...guards, ...items]);
  } catch (error) {
    if (isTransactionConflict(error)) return 'stale';
    throw error;
  }
  if (failed.length === 0) return 'charged';
  if (failed.some((index) => index >= counters.length && index < counters.length + guards.length)) return 'guard-failed';
  return failed.some((index) => index >= counters.length + guards.length) ? 'record-exists' : 'stale';
}
