import { BatchWriteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { itemKey, type ItemRecord } from '../db/items.js';
import { archiveOriginal, originalKey, type OriginalRecord } from '../db/originals.js';

/** BatchWriteItem calls kept in flight at once; a 2000-markup folder is 80 of them. */
const PARALLEL_BATCHES = 8;

/**
 * Removes item records (folders and markups) with BatchWriteItem, 25 at a time and several batches
 * in parallel, retrying what DynamoDB leaves unprocessed. Callers decide what to remove (a folder's
 * whole subtree, a set of markups) and in what order (one call finishes before it returns). What
 * hangs off a markup goes too: a retained original is archived first, so the organization's stored
 * bytes never count a file whose markup is gone; threads and files join here as later issues add them.
 */
export async function deleteItemRecords(records: readonly ItemRecord[]): Promise<void> {
  await runInParallel(
    records.filter((record) => record.kind === 'markup' && record.hasRetainedOriginal),
    PARALLEL_BATCHES,
    (record) => archiveOriginalOf(record.id),
  );
  const chunks: ItemRecord[][] = [];
  for (let i = 0; i < records.length; i += 25) chunks.push(records.slice(i, i + 25));
  await runInParallel(chunks, PARALLEL_BATCHES, deleteChunk);
}

async function deleteChunk(chunk: readonly ItemRecord[]): Promise<void> {
  const tableName = getConfig().tableName;
  let requests: { DeleteRequest: { Key: Record<string, unknown> } }[] | undefined = chunk.map((record) => ({
    DeleteRequest: { Key: itemKey(record.id) },
  }));
  for (let attempt = 0; requests && requests.length > 0; attempt += 1) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
    const result = await getDb().send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
    requests = result.UnprocessedItems?.[tableName] as typeof requests;
  }
}

async function archiveOriginalOf(markupId: string): Promise<void> {
  const stored = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: originalKey(markupId), ConsistentRead: true }));
  const original = stored.Item as OriginalRecord | undefined;
  if (original?.state === 'retained') await archiveOriginal(original);
}

async function runInParallel<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
