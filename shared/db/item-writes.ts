import { BatchExecuteStatementCommand } from '@aws-sdk/lib-dynamodb';
import { forEachLimit } from '../concurrency.js';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { AGAIN, withBackoff } from './core/backoff.js';
import { isTransactionConflict } from './core/errors.js';
import {
  itemDiff,
  itemKey,
  itemUpdate,
  getItems,
  toItem,
  type FolderRecord,
  type ItemRecord,
  type ItemUpdateOptions,
  type MarkupRecord,
} from './items.js';
import { claimName, releaseName } from './folder-names.js';
import { versionCondition } from './core/table.js';
import { putNew, transactUnlessConditionFails, tryTransact, updateIfConditionHolds, type TransactItem } from './core/transact.js';

/**
 * The writes of folders and markups, one function per access pattern. Each keeps index keys in step
 * (through `itemUpdate`) and answers what happened instead of throwing DynamoDB's errors: the
 * domain decides what a failed condition means to the caller.
 */

/**
 * Writes `next` over the stored `current` as one UpdateItem (`itemUpdate` with `options`). True when
 * written or nothing changed; false when its condition failed: the item is gone, or (with
 * `unchangedSinceRead` or `when`) it no longer is what the caller read. `also` (built only when
 * something changes, such as the change's outbox event) commits in the same transaction.
 */
export async function applyItemChange(
  current: ItemRecord,
  next: ItemRecord,
  options: ItemUpdateOptions = {},
  also: () => TransactItem[] = () => [],
): Promise<boolean> {
  const update = itemUpdate(current, next, options);
  if (!update) return true;
  const extra = also();
  if (extra.length === 0) return updateIfConditionHolds(update);
  return (await transactUnlessConditionFails([{ Update: update }, ...extra])) === undefined;
}

/**
 * Moves an item from `version` to the next one and nothing else: the fence of a delete guarded by
 * `If-Match`, which then removes a tree in many writes. False when the item is gone or no longer at
 * `version`; a writer holding the same version afterwards fails its own condition.
 */
export async function claimItemVersion(itemId: string, version: number): Promise<boolean> {
  const guard = versionCondition(version);
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: itemKey(itemId),
    UpdateExpression: 'ADD #version :one',
    ConditionExpression: `attribute_exists(PK) AND ${guard.expression}`,
    ExpressionAttributeNames: guard.names,
    ExpressionAttributeValues: { ':one': 1, ...guard.values },
  });
}

/** Statements per BatchExecuteStatement (the DynamoDB maximum). */
const STATEMENTS_PER_BATCH = 25;
/** Parallel 25-statement write batches one tree operation keeps in flight. */
const WRITE_BATCH_CONCURRENCY = 8;
/** Attempts of a batch whose statements DynamoDB refused for a transient reason. */
const BATCH_ATTEMPTS = 8;

/**
 * `itemDiff` as a PartiQL UPDATE; its WHERE on the full key fails (instead of creating) when the
 * item is gone, and on `workspaceId` when another writer carried the item first.
 */
function itemStatement(current: ItemRecord, next: ItemRecord): { Statement: string; Parameters: unknown[] } | undefined {
  const { sets, removes } = itemDiff(current, next);
  if (sets.length === 0 && removes.length === 0) return undefined;
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const key = itemKey(current.id);
  const clauses = [...sets.map(([name]) => `SET ${quote(name)} = ?`), ...removes.map((name) => `REMOVE ${quote(name)}`)];
  return {
    Statement: `UPDATE ${quote(getConfig().tableName)} ${clauses.join(' ')} WHERE "PK" = ? AND "SK" = ? AND "workspaceId" = ?`,
    Parameters: [...sets.map(([, value]) => value), key.PK, key.SK, current.workspaceId],
  };
}

/**
 * Applies many record changes 25 to a BatchExecuteStatement, several batches in flight: a
 * 2000-markup tree is 80 requests instead of 2000. Each change is conditional on the item still
 * being in the workspace it was read in. Statements refused for a transient reason are retried;
 * items deleted or carried by another writer meanwhile are skipped. Answers how many changed.
 */
export async function applyItemChanges(changes: readonly { current: ItemRecord; next: ItemRecord }[]): Promise<number> {
  const statements = changes.flatMap(({ current, next }) => itemStatement(current, next) ?? []);
  const batches: (typeof statements)[] = [];
  for (let i = 0; i < statements.length; i += STATEMENTS_PER_BATCH) batches.push(statements.slice(i, i + STATEMENTS_PER_BATCH));
  let applied = 0;
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
        applied += pending.filter((_, i) => !Responses[i]?.Error).length;
        refusal = Responses.find((r) => r.Error && r.Error.Code !== 'ConditionalCheckFailed')?.Error?.Message;
        pending = pending.filter((_, i) => refused(i));
        return pending.length > 0 ? AGAIN : undefined;
      },
      { attempts: BATCH_ATTEMPTS, baseMs: 40, capMs: 1000, exhausted: () => new Error(`BatchExecuteStatement kept failing: ${refusal}`) },
    );
  });
  return applied;
}

/**
 * Carries one item of a pending move to `next` (its new workspace, for a folder its rebased
 * ancestor ids), only while it is still in the workspace it was read in; false when another writer
 * (the move worker, another request) carried it first or it is gone.
 */
export async function carryItemRecord(current: ItemRecord, next: ItemRecord): Promise<boolean> {
  return applyItemChange(current, next, {
    when: { expression: '#ws = :from', names: { '#ws': 'workspaceId' }, values: { ':from': current.workspaceId } },
  });
}

/** A folder record with `activityAt` moved to `at`: something was put in it. */
export const touched = (folder: FolderRecord, at: number): FolderRecord => ({ ...folder, activityAt: Math.max(folder.activityAt, at) });

/**
 * Creates a folder record, claims its name under the parent and marks activity on the parent, in
 * one transaction; transactions colliding on the parent are retried. 'parent-gone' when the parent
 * was deleted meanwhile, 'name-taken' when a sibling holds the name.
 */
export async function insertFolderRecord(
  record: FolderRecord,
  parent: FolderRecord,
  at: number,
): Promise<'created' | 'parent-gone' | 'name-taken'> {
  const touch = itemUpdate(parent, touched(parent, at), { when: TAKES_ITEMS });
  const parentCheck: TransactItem = touch ? { Update: touch } : { ConditionCheck: takesItemsCheck(parent) };
  const failed = await transactUnlessConditionFails([putNew(toItem(record)), parentCheck, ...claimName(record)]);
  if (failed === 1) return 'parent-gone';
  if (failed === 2) return 'name-taken';
  if (failed !== undefined)
    throw new Error(`Folder ${record.id} could not be created: item ${failed} of its transaction failed its condition.`);
  return 'created';
}

const existsCheck = (itemId: string): ConditionCheck => ({
  TableName: getConfig().tableName,
  Key: itemKey(itemId),
  ConditionExpression: 'attribute_exists(PK)',
});

/**
 * A folder being deleted (`deletingSince`, set by `markFolderDeleting` before its subtree is read)
 * takes nothing in and lets nothing out: every create and move into or out of it is conditioned on
 * this, so the subtree a deletion read is the subtree it deletes.
 */
const TAKES_ITEMS = { expression: 'attribute_not_exists(#deleting)', names: { '#deleting': 'deletingSince' }, values: {} };

/** The condition that `folder` exists and is not being deleted, for a transaction that puts an item in it. */
export function takesItemsCheck(folder: Pick<FolderRecord, 'id'>): ConditionCheck {
  return {
    TableName: getConfig().tableName,
    Key: itemKey(folder.id),
    ConditionExpression: `attribute_exists(PK) AND ${TAKES_ITEMS.expression}`,
    ExpressionAttributeNames: TAKES_ITEMS.names,
  };
}

/**
 * The condition that the folder an item leaves is not being deleted. A folder that is gone lets its
 * item go: moving is how an item left without a folder is rescued.
 */
export function letsItemsOutCheck(folderId: string): ConditionCheck {
  return {
    TableName: getConfig().tableName,
    Key: itemKey(folderId),
    ConditionExpression: `attribute_not_exists(PK) OR ${TAKES_ITEMS.expression}`,
    ExpressionAttributeNames: TAKES_ITEMS.names,
  };
}

/** The most actions one DynamoDB transaction takes. */
export const MAX_TRANSACTION_ITEMS = 100;

/**
 * Marks a folder as being deleted (`deletingSince`), from which on it takes nothing in and lets
 * nothing out (`takesItemsCheck`). False when it is gone. Marking one already marked keeps the first time.
 */
export async function markFolderDeleting(folderId: string, at: number, parentFolderId?: string): Promise<boolean> {
  // A subfolder is marked only while it is still under the (marked) folder it was listed under: an index read may lag a move out.
  const under = parentFolderId === undefined ? '' : ' AND #parent = :parent';
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: itemKey(folderId),
    UpdateExpression: 'SET #deleting = if_not_exists(#deleting, :at)',
    ConditionExpression: `attribute_exists(PK) AND #kind = :folder${under}`,
    ExpressionAttributeNames: { '#deleting': 'deletingSince', '#kind': 'kind', ...(under ? { '#parent': 'parentFolderId' } : {}) },
    ExpressionAttributeValues: { ':at': at, ':folder': 'folder', ...(under ? { ':parent': parentFolderId } : {}) },
  });
}

type ConditionCheck = NonNullable<TransactItem['ConditionCheck']>;

/**
 * Renames a folder: the record (condition: still under the parent and with the name it was read
 * with) and its name claim (the old one released, the new one taken) change in one transaction.
 * 'changed' when the folder was deleted, moved or renamed meanwhile; 'name-taken' when a sibling
 * holds the name.
 */
export async function renameFolderRecord(
  current: FolderRecord,
  next: FolderRecord,
  options: { expectedVersion?: number } = {},
): Promise<'renamed' | 'changed' | 'name-taken'> {
  const guard = options.expectedVersion === undefined ? undefined : versionCondition(options.expectedVersion);
  const update = itemUpdate(current, next, {
    when: {
      expression: `#parent = :parent AND #name = :name${guard ? ` AND ${guard.expression}` : ''}`,
      names: { '#parent': 'parentFolderId', '#name': 'name', ...guard?.names },
      values: { ':parent': current.parentFolderId, ':name': current.name, ...guard?.values },
    },
  });
  if (!update) return 'renamed';
  // Only the case changes: the claim (keyed by the lower-cased name) stays as it is.
  const claims = current.name.toLowerCase() === next.name.toLowerCase() ? [] : [...releaseName(current), ...claimName(next)];
  const failed = await transactUnlessConditionFails([{ Update: update }, ...claims]);
  if (failed === 0 || failed === 1) return 'changed';
  if (failed === 2) return 'name-taken';
  return 'renamed';
}

/**
 * Moves one item record to `next` under `destination` and marks activity on the destination, in
 * one transaction that also holds the destination's ancestry as read: `ancestors` are the folders
 * from the root down to the destination's parent, and each of them (and the destination) must still
 * have the parent it had when read. Since transactions are serializable, two crossing moves (X into
 * Y, Y into X) cannot both commit: the second finds an ancestor moved, so no folder can end up
 * below itself. A folder's name claim moves too.
 *
 * `also` (a cross-workspace move's record and its source workspace's marker, `moves.ts`) commits
 * in the same transaction.
 *
 * 'item-changed': the item is no longer where it was read (or a move of it is still pending);
 * 'ancestry-changed': the destination or one of its ancestors moved, is gone or is being deleted (read again);
 * 'name-taken': a folder under the destination holds the name;
 * 'source-deleting': the folder the item is in is being deleted.
 */
export async function moveItemRecord(
  item: ItemRecord,
  next: ItemRecord,
  destination: FolderRecord,
  ancestors: readonly FolderRecord[],
  at: number,
  also: readonly TransactItem[] = [],
): Promise<'moved' | 'item-changed' | 'ancestry-changed' | 'name-taken' | 'source-deleting'> {
  const move = itemUpdate(item, next, {
    when: {
      expression: '#from = :from AND #ws = :ws AND attribute_not_exists(#pending)',
      names: { '#from': 'parentFolderId', '#ws': 'workspaceId', '#pending': 'pendingMoveFrom' },
      values: { ':from': item.parentFolderId, ':ws': item.workspaceId },
    },
  });
  if (!move) return 'moved';
  const settled = settledUnder(destination);
  const touch = itemUpdate(destination, touched(destination, at), settled ? { when: settled } : {});
  const destinationCheck: TransactItem = touch ? { Update: touch } : { ConditionCheck: parentCheck(destination) };
  // The root and archive folders never move, so only the folders below them are checked.
  const ancestry = ancestors
    .filter((folder) => folder.parentFolderId)
    .map((folder): TransactItem => ({ ConditionCheck: parentCheck(folder) }));
  const claims = item.kind === 'folder' && next.kind === 'folder' ? [...releaseName(item), ...claimName(next)] : [];
  // Nothing leaves a folder that is being deleted (the item would be deleted with it, or left behind). A source that is
  // the destination's ancestor is checked as one already (a transaction names each item once).
  const checked = new Set([destination.id, ...ancestors.map((folder) => folder.id)]);
  const source: TransactItem[] =
    item.parentFolderId && !checked.has(item.parentFolderId) ? [{ ConditionCheck: letsItemsOutCheck(item.parentFolderId) }] : [];
  const items: TransactItem[] = [{ Update: move }, destinationCheck, ...ancestry, ...claims, ...source, ...also];
  const failed = await transactUnlessConditionFails(items);
  if (failed === undefined) return 'moved';
  if (failed === 0) return 'item-changed';
  if (failed <= ancestry.length + 1) return 'ancestry-changed';
  if (source.length > 0 && failed === ancestry.length + 1 + claims.length + 1) return 'source-deleting';
  // The claims: the released old name (item-changed) and the new one.
  return claims.length > 0 && failed === ancestry.length + 1 + claims.length ? 'name-taken' : 'item-changed';
}

/**
 * The condition that a folder below the root still has the parent it was read with and carries no
 * pending move (a subtree whose move is unfinished takes nothing in until it is finished).
 */
function settledUnder(folder: FolderRecord): NonNullable<ItemUpdateOptions['when']> | undefined {
  if (!folder.parentFolderId) return undefined;
  return {
    expression: `#parent = :parent AND attribute_not_exists(#pending) AND ${TAKES_ITEMS.expression}`,
    names: { '#parent': 'parentFolderId', '#pending': 'pendingMoveFrom', ...TAKES_ITEMS.names },
    values: { ':parent': folder.parentFolderId },
  };
}

/** A ConditionCheck of `settledUnder` (for the root and archive folders: that they exist). */
function parentCheck(folder: FolderRecord): ConditionCheck {
  const settled = settledUnder(folder);
  if (!settled) return existsCheck(folder.id);
  return {
    TableName: getConfig().tableName,
    Key: itemKey(folder.id),
    ConditionExpression: settled.expression,
    ExpressionAttributeNames: settled.names,
    ExpressionAttributeValues: settled.values,
  };
}

/**
 * Clears an item's `pendingMoveFrom` once what its move carries has followed, only while it is still
 * that move's marker. False when another request cleared it first (or the item is gone).
 */
export async function clearPendingMove(item: ItemRecord): Promise<boolean> {
  if (!item.pendingMoveFrom) return true;
  const { pendingMoveFrom: _done, ...rest } = item;
  return applyItemChange(item, rest as ItemRecord, {
    when: { expression: '#pending = :pending', names: { '#pending': 'pendingMoveFrom' }, values: { ':pending': item.pendingMoveFrom } },
  });
}

/**
 * Moves markups into `target`, all or nothing, in one transaction: each markup must be unchanged
 * since it was read, the target still the same live folder of its workspace, not being deleted, and
 * no source folder being deleted. 'changed' when a markup or the target changed or another
 * transaction held one of the items (the caller reads again); 'source-deleting' when a folder a
 * markup leaves is being deleted.
 */
export async function moveMarkupRecords(
  moves: readonly { current: MarkupRecord; next: MarkupRecord }[],
  target: FolderRecord,
): Promise<'moved' | 'changed' | 'source-deleting'> {
  const updates = moves.flatMap(({ current, next }) => {
    const update = itemUpdate(current, next, { unchangedSinceRead: true });
    return update ? [{ Update: update } satisfies TransactItem] : [];
  });
  if (updates.length === 0) return 'moved';
  const folderCheck: TransactItem = {
    ConditionCheck: {
      TableName: getConfig().tableName,
      Key: itemKey(target.id),
      ConditionExpression: `attribute_exists(PK) AND #kind = :folder AND #ws = :ws AND ${TAKES_ITEMS.expression}`,
      ExpressionAttributeNames: { '#kind': 'kind', '#ws': 'workspaceId', ...TAKES_ITEMS.names },
      ExpressionAttributeValues: { ':folder': 'folder', ':ws': target.workspaceId },
    },
  };
  // Nor does a markup leave a folder that is being deleted. The sources are checked in the transaction while it has room
  // (one action a markup, one a source folder, at most 100); a wider batch reads them first, consistently.
  const sourceIds = [...new Set(moves.map(({ current }) => current.parentFolderId).filter((id): id is string => Boolean(id)))].filter(
    (id) => id !== target.id,
  );
  const inTransaction = 1 + sourceIds.length + updates.length <= MAX_TRANSACTION_ITEMS;
  if (!inTransaction) {
    const read = await getItems(sourceIds, true);
    if (read.some((item) => item.kind === 'folder' && item.deletingSince !== undefined)) return 'source-deleting';
  }
  const sources = inTransaction ? sourceIds.map((id): TransactItem => ({ ConditionCheck: letsItemsOutCheck(id) })) : [];
  try {
    const failed = await tryTransact([folderCheck, ...sources, ...updates]);
    if (failed.length === 0) return 'moved';
    // The target failing its check (gone, moved, being deleted) is read again by the caller, as a changed markup is.
    return failed.some((index) => index >= 1 && index <= sources.length) ? 'source-deleting' : 'changed';
  } catch (error) {
    if (isTransactionConflict(error)) return 'changed';
    throw error;
  }
}

/**
 * Records that the conversion of a markup could not even be scheduled (`next` is the failed
 * markup), only while its conversion is still pending, with `also` (its `markup_ready`) in the same
 * transaction. False when the worker got to it first.
 */
export async function failPendingConversion(
  current: MarkupRecord,
  next: MarkupRecord,
  also: () => TransactItem[] = () => [],
): Promise<boolean> {
  return applyItemChange(
    current,
    next,
    { when: { expression: '#cs = :pending', names: { '#cs': 'conversionStatus' }, values: { ':pending': 'pending' } } },
    also,
  );
}
