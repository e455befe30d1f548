import { BatchExecuteStatementCommand } from '@aws-sdk/lib-dynamodb';
import { forEachLimit } from '../concurrency.js';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { AGAIN, withBackoff } from './backoff.js';
import { isTransactionConflict } from './errors.js';
import { itemDiff, itemKey, itemUpdate, toItem, type FolderRecord, type ItemRecord, type ItemUpdateOptions, type MarkupRecord } from './items.js';
import { putNew, transactUnlessConditionFails, tryTransact, updateIfConditionHolds, type TransactItem } from './transact.js';

/**
 * The writes of folders and markups, one function per access pattern. Each keeps index keys in step
 * (through `itemUpdate`) and answers what happened instead of throwing DynamoDB's errors: the
 * domain decides what a failed condition means to the caller.
 */

/**
 * Writes `next` over the stored `current` as one UpdateItem (`itemUpdate` with `options`). True when
 * written or nothing changed; false when its condition failed: the item is gone, or (with
 * `unchangedSinceRead` or `when`) it no longer is what the caller read.
 */
export async function applyItemChange(current: ItemRecord, next: ItemRecord, options: ItemUpdateOptions = {}): Promise<boolean> {
  const update = itemUpdate(current, next, options);
  return update ? updateIfConditionHolds(update) : true;
}

/** Statements per BatchExecuteStatement (the DynamoDB maximum). */
const STATEMENTS_PER_BATCH = 25;
/** Parallel 25-statement write batches one tree operation keeps in flight. */
const WRITE_BATCH_CONCURRENCY = 8;
/** Attempts of a batch whose statements DynamoDB refused for a transient reason. */
const BATCH_ATTEMPTS = 8;

/** `itemDiff` as a PartiQL UPDATE; its WHERE on the full key fails (instead of creating) when the item is gone. */
function itemStatement(current: ItemRecord, next: ItemRecord): { Statement: string; Parameters: unknown[] } | undefined {
  const { sets, removes } = itemDiff(current, next);
  if (sets.length === 0 && removes.length === 0) return undefined;
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const key = itemKey(current.id);
  const clauses = [...sets.map(([name]) => `SET ${quote(name)} = ?`), ...removes.map((name) => `REMOVE ${quote(name)}`)];
  return {
    Statement: `UPDATE ${quote(getConfig().tableName)} ${clauses.join(' ')} WHERE "PK" = ? AND "SK" = ?`,
    Parameters: [...sets.map(([, value]) => value), key.PK, key.SK],
  };
}

/**
 * Applies many record changes 25 to a BatchExecuteStatement, several batches in flight: a
 * 2000-markup tree is 80 requests instead of 2000. Statements refused for a transient reason are
 * retried; items deleted meanwhile are skipped (nothing to carry along).
 */
export async function applyItemChanges(changes: readonly { current: ItemRecord; next: ItemRecord }[]): Promise<void> {
  const statements = changes.flatMap(({ current, next }) => itemStatement(current, next) ?? []);
  const batches: (typeof statements)[] = [];
  for (let i = 0; i < statements.length; i += STATEMENTS_PER_BATCH) batches.push(statements.slice(i, i + STATEMENTS_PER_BATCH));
  await forEachLimit(batches, WRITE_BATCH_CONCURRENCY, async (batch) => {
    let pending = batch;
    let refusal: string | undefined;
    await withBackoff(
      async () => {
        const { Responses = [] } = await getDb().send(new BatchExecuteStatementCommand({ Statements: pending }));
        const refused = (i: number) => {
          const code = Responses[i]?.Error?.Code;
          return code !== undefined && code !== 'ConditionalCheckFailed';
        };
        refusal = Responses.find((r) => r.Error && r.Error.Code !== 'ConditionalCheckFailed')?.Error?.Message;
        pending = pending.filter((_, i) => refused(i));
        return pending.length > 0 ? AGAIN : undefined;
      },
      { attempts: BATCH_ATTEMPTS, baseMs: 40, capMs: 1000, exhausted: () => new Error(`BatchExecuteStatement kept failing: ${refusal}`) },
    );
  });
}

/** A folder record with `activityAt` moved to `at`: something was put in it. */
export const touched = (folder: FolderRecord, at: number): FolderRecord => ({ ...folder, activityAt: Math.max(folder.activityAt, at) });

/**
 * Creates a folder record and marks activity on its parent, in one transaction. False when the
 * parent is gone (deleted meanwhile); transactions colliding on the parent are retried.
 */
export async function insertFolderRecord(record: FolderRecord, parent: FolderRecord, at: number): Promise<boolean> {
  const touch = itemUpdate(parent, touched(parent, at));
  const failed = await transactUnlessConditionFails([putNew(toItem(record)), ...(touch ? [{ Update: touch }] : [])]);
  if (failed === 1) return false;
  if (failed !== undefined) throw new Error(`Folder ${record.id} could not be created: item ${failed} of its transaction failed its condition.`);
  return true;
}

/**
 * Moves one item record to `next` (a new parent `destination`) and marks activity on the
 * destination, in one transaction. The item must still be where it was read (same parent and
 * workspace): 'item-changed' otherwise; 'destination-gone' when the destination folder was deleted.
 */
export async function moveItemRecord(item: ItemRecord, next: ItemRecord, destination: FolderRecord, at: number): Promise<'moved' | 'item-changed' | 'destination-gone'> {
  const move = itemUpdate(item, next, {
    when: {
      expression: '#from = :from AND #ws = :ws',
      names: { '#from': 'parentFolderId', '#ws': 'workspaceId' },
      values: { ':from': item.parentFolderId, ':ws': item.workspaceId },
    },
  });
  const touch = itemUpdate(destination, touched(destination, at));
  const failed = await transactUnlessConditionFails([move, touch].flatMap((update) => (update ? [{ Update: update }] : [])));
  if (failed === 0) return 'item-changed';
  if (failed === 1) return 'destination-gone';
  return 'moved';
}

/**
 * Moves markups into `target`, all or nothing, in one transaction: each markup must be unchanged
 * since it was read and the target still the same live folder of its workspace. False when either
 * does not hold or another transaction held one of the items (the caller reads again).
 */
export async function moveMarkupRecords(moves: readonly { current: MarkupRecord; next: MarkupRecord }[], target: FolderRecord): Promise<boolean> {
  const updates = moves.flatMap(({ current, next }) => {
    const update = itemUpdate(current, next, { unchangedSinceRead: true });
    return update ? [{ Update: update } satisfies TransactItem] : [];
  });
  if (updates.length === 0) return true;
  const folderCheck: TransactItem = {
    ConditionCheck: {
      TableName: getConfig().tableName,
      Key: itemKey(target.id),
      ConditionExpression: 'attribute_exists(PK) AND #kind = :folder AND #ws = :ws',
      ExpressionAttributeNames: { '#kind': 'kind', '#ws': 'workspaceId' },
      ExpressionAttributeValues: { ':folder': 'folder', ':ws': target.workspaceId },
    },
  };
  try {
    return (await tryTransact([folderCheck, ...updates])).length === 0;
  } catch (error) {
    if (isTransactionConflict(error)) return false;
    throw error;
  }
}

/**
 * Records that the conversion of a markup could not even be scheduled (`next` is the failed
 * markup), only while its conversion is still pending. False when the worker got to it first.
 */
export async function failPendingConversion(current: MarkupRecord, next: MarkupRecord): Promise<boolean> {
  return applyItemChange(current, next, { when: { expression: '#cs = :pending', names: { '#cs': 'conversionStatus' }, values: { ':pending': 'pending' } } });
}
