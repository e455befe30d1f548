import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { SORT_SEPARATOR } from './core/table.js';
import { fromItem, itemKey, PENDING_WORK_PARTITION, pendingWorkKeys, sortableTime, type MarkupRecord } from './items.js';
import { batchDelete, batchPut, put, updateIfConditionHolds, type TransactItem } from './core/transact.js';

/**
 * The pending-work index (GSI5 `PENDINGWORK`, `pendingWorkKeys` in items.ts): markups whose
 * conversion or thumbnail no job run has taken yet, by when their job was last queued. The
 * creating transaction puts a markup in it; the first run of its job takes it out
 * (`markWorkStarted`), and so does any write that ends the work (ready, failed, unavailable).
 * Deleted markups whose objects are still to be removed are in it too (`GONE#<markupId>`). What
 * stays in it for minutes had its job lost between the commit and its enqueue, and the sweep
 * (shared/domain/markups/pending-work.ts) queues the job again.
 */

/** What the index holds: markups with pending work, deleted markups whose objects are still to be removed, and archived originals whose object is. */
export type DueWork =
  | { kind: 'markup'; markup: MarkupRecord }
  | { kind: 'deleted-markup'; markupId: string }
  | { kind: 'archived-original'; objectKey: string; markupId: string };

/** Entries of the index last queued before `before` (epoch ms), oldest first, at most `limit`. */
export async function workDue(before: number, limit: number): Promise<DueWork[]> {
  const page = await getDb().send(
    new QueryCommand({
      TableName: getConfig().tableName,
      IndexName: 'GSI5',
      KeyConditionExpression: 'GSI5PK = :pk AND GSI5SK < :before',
      ExpressionAttributeValues: { ':pk': PENDING_WORK_PARTITION, ':before': sortableTime(before) },
      Limit: limit,
    }),
  );
  return (page.Items ?? []).map((item): DueWork => {
    if (item.entity === DELETED_MARKUP_OBJECTS) return { kind: 'deleted-markup', markupId: item.markupId as string };
    if (item.entity === ARCHIVED_ORIGINAL_OBJECT)
      return { kind: 'archived-original', objectKey: item.objectKey as string, markupId: item.markupId as string };
    return { kind: 'markup', markup: fromItem(item) as MarkupRecord };
  });
}

// Archived originals whose object is still to be removed

const ARCHIVED_ORIGINAL_OBJECT = 'ArchivedOriginalObject';
const archivedOriginalObjectKey = (objectKey: string) => ({ PK: `ORIGINALGONE#${objectKey}`, SK: 'ORIGINALGONE' });

/**
 * The record that an archived original's object is still to be removed, for the transaction that
 * archives it: the archiving code removes it once the object's deletion is queued, and while it
 * stays the sweep queues that deletion (an archive that died between its commit and the enqueue
 * would otherwise leave the object in storage, counted nowhere, for good).
 */
export const archivedOriginalObjectPut = (objectKey: string, markupId: string, at: number): TransactItem =>
  put({
    ...archivedOriginalObjectKey(objectKey),
    entity: ARCHIVED_ORIGINAL_OBJECT,
    objectKey,
    markupId,
    GSI5PK: PENDING_WORK_PARTITION,
    GSI5SK: `${sortableTime(at)}${SORT_SEPARATOR}${markupId}`,
  });

/** The deletion of these objects is queued: their records go. */
export async function clearArchivedOriginalObjects(objectKeys: readonly string[]): Promise<void> {
  await batchDelete(objectKeys.map(archivedOriginalObjectKey));
}

// Deleted markups whose objects are still to be removed

const DELETED_MARKUP_OBJECTS = 'DeletedMarkupObjects';
const deletedMarkupObjectsKey = (markupId: string) => ({ PK: `GONE#${markupId}`, SK: 'GONE' });
const deletedMarkupObjectsItem = (markupId: string, at: number) => ({
  ...deletedMarkupObjectsKey(markupId),
  entity: DELETED_MARKUP_OBJECTS,
  markupId,
  GSI5PK: PENDING_WORK_PARTITION,
  GSI5SK: `${sortableTime(at)}${SORT_SEPARATOR}${markupId}`,
});

/**
 * The record that the objects of a deleted markup are still to be removed, for the transaction that
 * deletes the markup: the deletion's `delete-markup-objects` job removes it once the prefix is
 * empty, and while it stays the sweep queues that job again (a deletion that died between its
 * commit and the enqueue).
 */
export const deletedMarkupObjectsPut = (markupId: string, at: number): TransactItem => put(deletedMarkupObjectsItem(markupId, at));

/** The same records written ahead of deletions that are not one transaction (markups whose records free no bytes). */
export async function putDeletedMarkupObjects(markupIds: readonly string[], at: number): Promise<void> {
  await batchPut(markupIds.map((markupId) => deletedMarkupObjectsItem(markupId, at)));
}

/** The objects of these markups are removed (or the markup was not deleted after all): their records go. */
export async function clearDeletedMarkupObjects(markupIds: readonly string[]): Promise<void> {
  await batchDelete(markupIds.map(deletedMarkupObjectsKey));
}

/** Records that the sweep queued the removal again at `at`; false when the job finished meanwhile. */
export async function markDeletionQueued(markupId: string, at: number): Promise<boolean> {
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: deletedMarkupObjectsKey(markupId),
    UpdateExpression: 'SET GSI5SK = :sk',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeValues: { ':sk': `${sortableTime(at)}${SORT_SEPARATOR}${markupId}` },
  });
}

/**
 * Records that the sweep queued the markup's job again at `at`, which moves it to the end of the
 * index; false when a run took the work (or it ended, or the markup went) meanwhile.
 */
export async function markWorkQueued(markup: MarkupRecord, at: number): Promise<boolean> {
  const keys = pendingWorkKeys({ ...markup, workQueuedAt: at });
  if (!keys.GSI5SK) return false;
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: itemKey(markup.id),
    UpdateExpression: 'SET workQueuedAt = :at, GSI5SK = :sk',
    ConditionExpression: 'GSI5PK = :pk',
    ExpressionAttributeValues: { ':at': at, ':sk': keys.GSI5SK, ':pk': PENDING_WORK_PARTITION },
  });
}

/**
 * Takes the markup's pending work out of the index as a run of its job starts on it: from here
 * SQS's redelivery and dead-letter queue own it, so the sweep never queues work that is running (a
 * job crashing its worker on every run is not queued again forever). False when the markup is gone.
 * Touches neither `version` nor `modifiedAt`: nothing a reader sees changes.
 */
export async function markWorkStarted(markupId: string, at: number): Promise<boolean> {
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: itemKey(markupId),
    UpdateExpression: 'SET workStartedAt = if_not_exists(workStartedAt, :at) REMOVE GSI5PK, GSI5SK',
    ConditionExpression: 'entity = :markup',
    ExpressionAttributeValues: { ':at': at, ':markup': 'Markup' },
  });
}
