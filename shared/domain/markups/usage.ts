import { DEFAULT_PLAN, getPlan, type Plan } from '../../db/plans.js';
import { getUsage, getUsageHistory, usagePeriod, type UsageCounters, type UsagePeriod } from '../../db/usage.js';
import type { WorkspaceRecord } from '../../db/workspaces.js';
import type { UsageView } from '../../schemas/markups.js';

/** Fraction of the monthly allowance at which usage reports a warning. */
export const WARNING_THRESHOLD = 0.8;

/** The Markup usage resource: the answer schema's type. */
export type MarkupUsage = UsageView;

/**
 * The Markup usage resource from a plan and a workspace's counters. `periodEnd` is exclusive (the
 * first instant of the next month). `averageMonthlyUsage` is the mean total (`used + bundleUsed`)
 * of the earlier months that have a record, null when there are none.
 */
export function describeUsage(plan: Plan, counters: UsageCounters, history: readonly number[], period: UsagePeriod): MarkupUsage {
  const limit = plan.markupLimit;
  const unlimited = limit === null;
  const remaining = unlimited ? null : Math.max(0, limit - counters.used);
  const limitReached = !unlimited && counters.used >= limit;
  return {
    scope: 'Workspace',
    used: counters.used,
    bundleUsed: counters.bundleUsed,
    limit,
    remaining,
    totalRemaining: remaining === null ? null : remaining + plan.bundleBalance,
    isUnlimited: unlimited,
    enforcementEnabled: !unlimited,
    isCustomOverride: limit !== DEFAULT_PLAN.markupLimit,
    warningThreshold: WARNING_THRESHOLD,
    isWarning: !unlimited && counters.used >= WARNING_THRESHOLD * limit,
    isLimitReached: limitReached,
    bundleBalance: plan.bundleBalance,
    isDrawingOnBundle: (limitReached && plan.bundleBalance > 0) || counters.bundleUsed > 0,
    averageMonthlyUsage:
      history.length === 0 ? null : Math.round((history.reduce((sum, total) => sum + total, 0) / history.length) * 100) / 100,
    periodStart: period.start.toISOString(),
    periodEnd: period.end.toISOString(),
  };
}

export async function getMarkupUsage(workspace: WorkspaceRecord, at = new Date()): Promise<MarkupUsage> {
  const period = usagePeriod(at);
  const [plan, counters, history] = await Promise.all([
    getPlan(workspace.organizationId),
    getUsage(workspace.id, period.key),
    getUsageHistory(workspace.id, period.key),
  ]);
  return describeUsage(plan, counters, history, period);
}
