import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { getConfig } from '../config.js';
import { getPlan, planKey, type Plan } from '../db/plans.js';
import { transact, type TransactItem } from '../db/transact.js';
import { getUsage, usageKey, usagePeriod } from '../db/usage.js';
import { ConflictError, PaymentRequiredError } from '../http/errors.js';
import { isConditionFailure, isTransactionConflict } from '../db/errors.js';

/** How long creation keeps retrying transactions that collide with concurrent creations. */
const CONTENTION_BUDGET_MS = 8000;

export interface Charge {
  fromAllowance: number;
  fromBundle: number;
}

/**
 * Creates `count` markups' worth of records (`items`) and charges them to the workspace's monthly
 * allowance, then to the organization's bundle, in ONE transaction: the counters carry conditions
 * (`used <= limit - n`, `bundleBalance >= n`), so concurrent creations can never exceed the limit and
 * a refused creation writes nothing. Counters only grow within a period, so a failed condition after
 * a fresh read is a real 402, and a transaction conflict is simply retried.
 */
export async function createWithAllowance(
  workspaceId: string,
  organizationId: string,
  count: number,
  items: TransactItem[],
  options: { at?: Date; plan?: Plan } = {},
): Promise<Charge> {
  const period = usagePeriod(options.at ?? new Date());
  const deadline = Date.now() + CONTENTION_BUDGET_MS;
  for (let attempt = 0; ; attempt += 1) {
    // The caller's fresh plan serves the first attempt; a retry reads it again, as a plan change
    // (a bundle drawn by a concurrent creation) may be why the first one failed.
    const [plan, usage] = await Promise.all([
      attempt === 0 && options.plan ? options.plan : getPlan(organizationId),
      getUsage(workspaceId, period.key),
    ]);
    const charge = split(plan, usage.used, count);
    try {
      await transact([...chargeItems(workspaceId, organizationId, period.key, plan, charge), ...items]);
      return charge;
    } catch (error) {
      const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : undefined;
      if (!reasons) throw error;
      const counterCount = charge.fromBundle > 0 ? 2 : 1;
      const ownItemFailed = reasons.slice(counterCount).some((reason) => reason.Code === 'ConditionalCheckFailed');
      if (ownItemFailed) throw new ConflictError('The markup could not be created because one of its records already exists.');
      const retryable = isTransactionConflict(error) || isConditionFailure(error);
      if (!retryable || Date.now() > deadline) {
        if (retryable) throw new ConflictError('Too many concurrent creations in this workspace; try again.');
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 10 * 2 ** attempt)));
    }
  }
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

function chargeItems(workspaceId: string, organizationId: string, periodKey: string, plan: Plan, charge: Charge): TransactItem[] {
  const TableName = getConfig().tableName;
  const counter: TransactItem = {
    Update: {
      TableName,
      Key: usageKey(workspaceId, periodKey),
      UpdateExpression: 'ADD used :a, bundleUsed :b SET entity = :entity, workspaceId = :ws',
      // Only a draw on the allowance needs the guard; a plan lowered below this month's use may still
      // create from the bundle.
      ...(plan.markupLimit === null || charge.fromAllowance === 0
        ? {}
        : { ConditionExpression: 'attribute_not_exists(used) OR used <= :max', ExpressionAttributeValues: { ':max': plan.markupLimit - charge.fromAllowance } }),
    },
  };
  counter.Update!.ExpressionAttributeValues = {
    ...counter.Update!.ExpressionAttributeValues,
    ':a': charge.fromAllowance,
    ':b': charge.fromBundle,
    ':entity': 'Usage',
    ':ws': workspaceId,
  };
  if (charge.fromBundle === 0) return [counter];
  return [
    counter,
    {
      Update: {
        TableName,
        Key: planKey(organizationId),
        UpdateExpression: 'ADD bundleBalance :negative',
        ConditionExpression: 'bundleBalance >= :needed',
        ExpressionAttributeValues: { ':negative': -charge.fromBundle, ':needed': charge.fromBundle },
      },
    },
  ];
}
