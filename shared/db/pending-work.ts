import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { fromItem, itemKey, PENDING_WORK_PARTITION, pendingWorkKeys, sortableTime, type MarkupRecord } from './items.js';
import { updateIfConditionHolds } from './transact.js';

/**
 * The pending-work index (GSI5 `PENDINGWORK`, `pendingWorkKeys` in items.ts): markups whose
 * conversion or thumbnail no job run has taken yet, by when their job was last queued. The
 * creating transaction puts a markup in it; the first run of its job takes it out
 * (`markWorkStarted`), and so does any write that ends the work (ready, failed, unavailable). What
 * stays in it for minutes had its job lost between the commit and its enqueue, and the sweep
 * (shared/domain/pending-work.ts) queues the job again.
 */

/** Markups in the index whose job was last queued before `before` (epoch ms), oldest first, at most `limit`. */
export async function markupsWithWorkDue(before: number, limit: number): Promise<MarkupRecord[]> {
  const page = await getDb().send(
    new QueryCommand({
      TableName: getConfig().tableName,
      IndexName: 'GSI5',
      KeyConditionExpression: 'GSI5PK = :pk AND GSI5SK < :before',
      ExpressionAttributeValues: { ':pk': PENDING_WORK_PARTITION, ':before': sortableTime(before) },
      Limit: limit,
    }),
  );
  return (page.Items ?? []).map((item) => fromItem(item) as MarkupRecord);
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
