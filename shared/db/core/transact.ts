import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  TransactWriteCommand,
  UpdateCommand,
  type TransactWriteCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { forEachLimit } from '../../concurrency.js';
import { getConfig } from '../../config.js';
import { getDb } from '../../clients.js';
import { ConflictError } from '../../errors.js';
import { logger } from '../../logger.js';
import { AGAIN, withBackoff } from './backoff.js';
import { failedConditionIndexes, isConditionFailure, isTransactionConflict } from './errors.js';
import { inMarkupTurn, namesMarkupEvents, sequenceMarkupEvents, type KnownHeads } from '../markup-events.js';

/** Concurrent writes on one markup's conversation may collide in DynamoDB; they are retried this long. */
const CONTENTION_BUDGET_MS = 10_000;

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A conditional create of one item; the transaction fails if the key already exists. */
export function putNew(item: Record<string, unknown>): TransactItem {
  return { Put: { TableName: getConfig().tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' } };
}

export function put(item: Record<string, unknown>): TransactItem {
  return { Put: { TableName: getConfig().tableName, Item: item } };
}

/**
 * Commits `items` as one transaction. One that records events naming a markup also numbers them in
 * their markups' logs (`sequenceMarkupEvents`: each head read, or remembered from this process's
 * last change of the markup, its conditional update and the log items appended after `items`),
 * taking its turn on those markups within this process (`inMarkupTurn`). When only an appended item
 * stopped it (another process took the numbers meanwhile), it is numbered again from the head the
 * failure handed back and retried here, with backoff. Any other failure is thrown as DynamoDB
 * reported it for `items` alone, so callers see the indexes of their own items.
 */
export async function transact(items: TransactItem[]): Promise<void> {
  if (!namesMarkupEvents(items)) {
    await getDb().send(new TransactWriteCommand({ TransactItems: items }));
    return;
  }
  let heads: KnownHeads = new Map();
  // One turn per process and markup for all attempts: the budget counts from when it is this one's turn.
  await inMarkupTurn(items, () =>
    withBackoff(
      async () => {
        const numbered = await sequenceMarkupEvents(items, heads);
        try {
          await getDb().send(new TransactWriteCommand({ TransactItems: numbered.items }));
          numbered.committed();
          return undefined;
        } catch (error) {
          if (!onlyAppendedItemsFailed(error, items.length)) throw withoutAppendedReasons(error, items.length);
          // Another change on the markup took the numbers: its head as the failure handed it back saves a read.
          heads = numbered.headsAfterFailure(cancellationReasons(error) ?? []);
          return AGAIN;
        }
      },
      {
        attempts: Number.POSITIVE_INFINITY,
        budgetMs: CONTENTION_BUDGET_MS,
        baseMs: 5,
        capMs: 100,
        exhausted: () => new ConflictError('Too many concurrent changes to this markup; try again.'),
      },
    ),
  );
}

/** The cancellation reasons of a cancelled transaction, one per item (undefined for any other error). */
function cancellationReasons(error: unknown): { Code?: string; Item?: Record<string, unknown> }[] | undefined {
  return error instanceof TransactionCanceledException ? error.CancellationReasons : undefined;
}

/** True when a cancelled transaction's only failed items come after the first `ownCount` (the ones `transact` appended). */
function onlyAppendedItemsFailed(error: unknown, ownCount: number): boolean {
  const reasons = cancellationReasons(error);
  if (!reasons) return false;
  const failed = reasons.flatMap((reason, index) => (reason.Code && reason.Code !== 'None' ? [index] : []));
  return failed.length > 0 && failed.every((index) => index >= ownCount);
}

/** The error as the caller's `ownCount` items met it: reasons of appended items left out. */
function withoutAppendedReasons(error: unknown, ownCount: number): unknown {
  if (error instanceof TransactionCanceledException && (error.CancellationReasons?.length ?? 0) > ownCount) {
    error.CancellationReasons = error.CancellationReasons!.slice(0, ownCount);
  }
  return error;
}

/**
 * One conditional UpdateItem: true when written, false when its condition did not hold (the item is
 * gone or no longer as read). Any other failure is thrown. The one place a plain update's condition
 * failure becomes a result.
 */
export async function updateIfConditionHolds(update: UpdateCommandInput): Promise<boolean> {
  try {
    await getDb().send(new UpdateCommand(update));
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Deletes items by key, 25 to a BatchWriteItem and several in flight, retrying with backoff what DynamoDB leaves unprocessed. */
export async function batchDelete(keys: readonly Record<string, unknown>[]): Promise<void> {
  await forEachLimit(chunksOf(keys), 8, (chunk) => batchWrite(chunk.map((Key) => ({ DeleteRequest: { Key } }))));
}

/** Writes items unconditionally, 25 to a BatchWriteItem and several in flight (bulk loads, test fixtures). */
export async function batchPut(items: readonly Record<string, unknown>[]): Promise<void> {
  await forEachLimit(chunksOf(items), 8, (chunk) => batchWrite(chunk.map((Item) => ({ PutRequest: { Item } }))));
}

function chunksOf<T>(list: readonly T[]): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < list.length; i += 25) chunks.push(list.slice(i, i + 25));
  return chunks;
}

type WriteRequest = { DeleteRequest: { Key: Record<string, unknown> } } | { PutRequest: { Item: Record<string, unknown> } };

/** Retries of what a batch left unprocessed: DynamoDB always makes progress eventually, so there is no attempt limit. */
const UNPROCESSED_RETRY = { attempts: Number.POSITIVE_INFINITY, baseMs: 50, capMs: 1000 };

async function batchWrite(writes: WriteRequest[]): Promise<void> {
  const tableName = getConfig().tableName;
  let requests: WriteRequest[] = writes;
  await withBackoff(async () => {
    const result = await getDb().send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
    requests = (result.UnprocessedItems?.[tableName] as WriteRequest[] | undefined) ?? [];
    return requests.length > 0 ? AGAIN : undefined;
  }, UNPROCESSED_RETRY);
}

/**
 * Every stored item of `keys` (any number, deduplicated by the caller or not), 100 to a
 * BatchGetItem (up to 4 in flight), retrying with backoff what DynamoDB leaves unprocessed; missing keys are skipped.
 */
export async function batchGet(
  keys: readonly Record<string, string>[],
  options: { consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const unique = [...new Map(keys.map((key) => [JSON.stringify(key), key])).values()];
  const tableName = getConfig().tableName;
  const found: Record<string, unknown>[] = [];
  const chunks: Record<string, unknown>[][] = [];
  for (let i = 0; i < unique.length; i += 100) chunks.push(unique.slice(i, i + 100));
  // Chunks in parallel: a page's 200 read marks cost one round trip, not two.
  await forEachLimit(chunks, 4, async (chunk) => {
    let pending = chunk;
    await withBackoff(async () => {
      const result = await getDb().send(
        new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: options.consistent } } }),
      );
      found.push(...(result.Responses?.[tableName] ?? []));
      pending = (result.UnprocessedKeys?.[tableName]?.Keys as Record<string, unknown>[] | undefined) ?? [];
      return pending.length > 0 ? AGAIN : undefined;
    }, UNPROCESSED_RETRY);
  });
  return found;
}

/**
 * Runs a transaction and answers the indexes of the items whose condition failed: empty when it
 * committed. Any other failure is thrown, a cancellation only by other transactions holding its
 * items (`isTransactionConflict`) included. Entity modules turn the indexes into the result of their
 * access pattern.
 */
export async function tryTransact(items: TransactItem[]): Promise<number[]> {
  try {
    await transact(items);
    return [];
  } catch (error) {
    const failed = failedConditionIndexes(error);
    if (failed.length === 0) throw error;
    return failed;
  }
}

/**
 * A transaction retried while DynamoDB cancels it only because another transaction held one of its
 * items (two folders created in one parent at once both touch the parent, and neither should fail).
 * Answers undefined when it committed, else the index of the first item whose condition failed; a
 * transaction still colliding after eight attempts, or failing otherwise, throws.
 */
export async function transactUnlessConditionFails(items: TransactItem[]): Promise<number | undefined> {
  return withBackoff(async () => (await tryTransact(items))[0], {
    attempts: 8,
    baseMs: 20,
    capMs: 1280,
    retryOn: isTransactionConflict,
  });
}

// ---------------------------------------------------------------------------------------------
// Optimistic writes: commit a transaction, retry from fresh reads, side effects that may fail
// ---------------------------------------------------------------------------------------------

/**
 * Commits a transaction, retrying while it only collided with another transaction. When a
 * condition fails, `explain` gets the index of the failing item and throws the error the caller
 * should see, or answers 'retry' (the write read stale data): then commit answers false and the
 * caller reads again.
 */
export async function commit(items: TransactItem[], explain: (failedIndex: number) => 'retry' | Promise<never>): Promise<boolean> {
  return withBackoff(
    async () => {
      const [failed] = await tryTransact(items);
      if (failed === undefined) return true;
      await explain(failed);
      return false;
    },
    {
      attempts: Number.POSITIVE_INFINITY,
      budgetMs: CONTENTION_BUDGET_MS,
      capMs: 250,
      retryOn: isTransactionConflict,
      exhausted: () => new ConflictError('Too many concurrent changes to the comments of this markup; try again.'),
    },
  );
}

/** What an attempt of `fromFreshReads` answers when its write found the data changed since it read it. */
export const STALE = Symbol('stale');

/**
 * How optimistic writes retry from fresh reads: with jittered backoff for as long as the contention
 * budget lasts, not a fixed number of times, so 20 concurrent writers of one item (replies to one
 * thread, renames of one markup) each get their turn instead of most answering 409; only a write
 * still losing after 10 s answers 409.
 */
export const FRESH_READ_RETRY = { attempts: Number.POSITIVE_INFINITY, budgetMs: CONTENTION_BUDGET_MS, baseMs: 10, capMs: 250 } as const;

/**
 * Optimistic concurrency: runs `attempt` (a read, then a write conditioned on what was read) again
 * while it answers STALE (`FRESH_READ_RETRY`), then answers 409 naming `subject`.
 */
export async function fromFreshReads<T>(subject: string, attempt: () => Promise<T | typeof STALE>): Promise<T> {
  return withBackoff(
    async () => {
      const result = await attempt();
      return result === STALE ? AGAIN : result;
    },
    { ...FRESH_READ_RETRY, exhausted: () => new ConflictError(`${subject} is being changed by another request; try again.`) },
  );
}

/** A later time than `previous`, so every change moves `modifiedAt` and optimistic checks see it. */
export const nextTime = (previous: number) => Math.max(Date.now(), previous + 1);

/**
 * Runs a write whose failure must not fail the request (activity times, events that only order
 * lists): a lost race to a newer value is expected and silent, anything else is logged.
 */
export async function bestEffort(what: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!isConditionFailure(error)) logger.warn('activity update failed', { what, error });
  }
}
