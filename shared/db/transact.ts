import { BatchGetCommand, BatchWriteCommand, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { forEachLimit } from '../concurrency.js';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A conditional create of one item; the transaction fails if the key already exists. */
export function putNew(item: Record<string, unknown>): TransactItem {
  return { Put: { TableName: getConfig().tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' } };
}

export function put(item: Record<string, unknown>): TransactItem {
  return { Put: { TableName: getConfig().tableName, Item: item } };
}

export async function transact(items: TransactItem[]): Promise<void> {
  await getDb().send(new TransactWriteCommand({ TransactItems: items }));
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

async function batchWrite(writes: WriteRequest[]): Promise<void> {
  const tableName = getConfig().tableName;
  let requests: WriteRequest[] | undefined = writes;
  for (let attempt = 0; requests && requests.length > 0; attempt += 1) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
    const result = await getDb().send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
    requests = result.UnprocessedItems?.[tableName] as WriteRequest[] | undefined;
  }
}

/**
 * Every stored item of `keys` (any number, deduplicated by the caller or not), 100 to a
 * BatchGetItem, retrying with backoff what DynamoDB leaves unprocessed; missing keys are skipped.
 */
export async function batchGet(keys: readonly Record<string, string>[], options: { consistent?: boolean } = {}): Promise<Record<string, unknown>[]> {
  const unique = [...new Map(keys.map((key) => [JSON.stringify(key), key])).values()];
  const tableName = getConfig().tableName;
  const found: Record<string, unknown>[] = [];
  for (let i = 0; i < unique.length; i += 100) {
    let pending: Record<string, unknown>[] | undefined = unique.slice(i, i + 100);
    for (let attempt = 0; pending && pending.length > 0; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
      const result = await getDb().send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: options.consistent } } }));
      found.push(...(result.Responses?.[tableName] ?? []));
      pending = result.UnprocessedKeys?.[tableName]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return found;
}
