import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';

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
