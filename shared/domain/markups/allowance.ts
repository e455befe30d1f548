import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import { getPlan, type Plan } from '../../db/plans.js';
import type { TransactItem } from '../../db/core/transact.js';
import { chargeCreation, getUsage, usagePeriod, type Charge, type ChargeRecord } from '../../db/usage.js';
import { ConflictError, PaymentRequiredError } from '../../errors.js';

/** How long creation keeps retrying transactions that collide with concurrent creations. */
const CONTENTION_BUDGET_MS = 8000;

/**
 * Creates `count` markups' worth of records (`items`) and charges them to the workspace's monthly
 * allowance, then to the organization's bundle, in ONE transaction: the counters carry conditions
 * (`used <= limit - n`, `bundleBalance >= n`), so concurrent creations can never exceed the limit and
 * a refused creation writes nothing. Counters only grow within a period (but for a failed
 * conversion's charge given back, which only makes room), so a failed condition after a fresh read
 * is a real 402, and a transaction conflict is simply retried. `items` may be made from the charge,
 * so a markup whose conversion may fail keeps what to give back (`ChargeRecord`).
 */
export async function createWithAllowance(
  workspaceId: string,
  organizationId: string,
  count: number,
  items: TransactItem[] | ((charge: ChargeRecord) => TransactItem[]),
  options: {
    at?: Date;
    plan?: Plan;
    /** Conditions the creation needs (the folders it goes into still take items), and the error when one fails. */
    guards?: { items: TransactItem[]; refused: () => Error };
  } = {},
): Promise<ChargeRecord> {
  const period = usagePeriod(options.at ?? new Date());
  return withBackoff(
    async (attempt) => {
      // The caller's fresh plan serves the first attempt; a retry reads it again, as a plan change
      // (a bundle drawn by a concurrent creation) may be why the first one failed.
      const [plan, usage] = await Promise.all([
        attempt === 0 && options.plan ? options.plan : getPlan(organizationId),
        getUsage(workspaceId, period.key),
      ]);
      const recorded: ChargeRecord = { ...split(plan, usage.used, count), workspaceId, periodKey: period.key };
      const written = typeof items === 'function' ? items(recorded) : items;
      const outcome = await chargeCreation(
        { workspaceId, organizationId, periodKey: period.key },
        plan,
        recorded,
        written,
        options.guards?.items,
      );
      if (outcome === 'guard-failed') throw options.guards!.refused();
      if (outcome === 'record-exists')
        throw new ConflictError('The markup could not be created because one of its records already exists.');
      return outcome === 'stale' ? AGAIN : recorded;
    },
    {
      attempts: Number.POSITIVE_INFINITY,
      budgetMs: CONTENTION_BUDGET_MS,
      capMs: 200,
      exhausted: () => new ConflictError('Too many concurrent creations in this workspace; try again.'),
    },
  );
}

/** Splits `count` between the remaining allowance and the bundle, or refuses with 402. */
function split(plan: Plan, used: number, count: number): Charge {
  if (plan.markupLimit === null) return { fromAllowance: count, fromBundle: 0 };
  const fromAllowance = Math.min(count, Math.max(0, plan.markupLimit - used));
  const fromBundle = count - fromAllowance;
  if (fromBundle > plan.bundleBalance) {
    throw new PaymentRequiredError(
      `The monthly markup limit of ${plan.markupLimit} is reached${plan.bundleBalance > 0 ? ` and the bundle has only ${plan.bundleBalance} left` : ''}; this request needs ${count}.`,
      'markup-limit-reached',
    );
  }
  return { fromAllowance, fromBundle };
}
