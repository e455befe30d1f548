import { forEachLimit } from '../concurrency.js';
import { itemKey, type ItemRecord } from '../db/items.js';
import { deleteMarkupSideRecords } from '../db/markup-records.js';
import { archiveOriginal, getOriginal } from '../db/originals.js';
import { storageChange } from '../db/storage.js';
import { messageReferenceKey } from '../db/messages.js';
import { getConversation, storedObjectsOf, threadReferenceKey } from '../db/threads.js';
import { batchDelete, transact } from '../db/transact.js';
import { deleteObjectsLater } from '../events/jobs.js';

/** BatchWriteItem calls kept in flight at once; a 2000-markup folder is 80 of them. */
const PARALLEL_BATCHES = 8;

/**
 * Removes item records (folders and markups) with BatchWriteItem, 25 at a time and several batches
 * in parallel, retrying what DynamoDB leaves unprocessed. Callers decide what to remove (a folder's
 * whole subtree, a set of markups) and in what order (one call finishes before it returns). What
 * hangs off a markup goes too: a retained original is archived first, so the organization's stored
 * bytes never count a file whose markup is gone; then its conversation (thread and message
 * references, attachment and screenshot objects with their counted bytes) and its MARKUP#<id>
 * records (threads, messages, read marks, tags, view-mode counters) are removed.
 */
export async function deleteItemRecords(records: readonly ItemRecord[]): Promise<void> {
  const markups = records.filter((record) => record.kind === 'markup');
  await forEachLimit(
    markups.filter((record) => record.hasRetainedOriginal),
    PARALLEL_BATCHES,
    (record) => archiveOriginalOf(record.id),
  );
  await forEachLimit(markups, PARALLEL_BATCHES, async (record) => {
    await deleteConversationOf(record.id);
    await deleteMarkupSideRecords(record.id);
  });
  const chunks: ItemRecord[][] = [];
  for (let i = 0; i < records.length; i += 25) chunks.push(records.slice(i, i + 25));
  await forEachLimit(chunks, PARALLEL_BATCHES, (chunk) => batchDelete(chunk.map((record) => itemKey(record.id))));
}

async function archiveOriginalOf(markupId: string): Promise<void> {
  const original = await getOriginal(markupId);
  if (original?.state === 'retained') await archiveOriginal(original);
}

/**
 * What a markup's conversation keeps outside its own partition: the thread and message references,
 * and the stored attachments and screenshots (queued for deletion, their bytes taken off the
 * organization's counters in one write).
 */
async function deleteConversationOf(markupId: string): Promise<void> {
  const { threads, messages } = await getConversation(markupId);
  if (threads.length === 0) return;
  let attachmentBytes = 0;
  let screenshotBytes = 0;
  const keys: string[] = [];
  for (const thread of threads) {
    const stored = storedObjectsOf(thread, messages.get(thread.id) ?? []);
    attachmentBytes += stored.attachmentBytes;
    screenshotBytes += stored.screenshotBytes;
    keys.push(...stored.keys);
  }
  await batchDelete([
    ...threads.map((thread) => threadReferenceKey(thread.id)),
    ...[...messages.values()].flat().map((message) => messageReferenceKey(message.id)),
  ]);
  if (attachmentBytes + screenshotBytes > 0) {
    await transact([{ Update: storageChange(threads[0]!.organizationId, { attachments: -attachmentBytes, images: -screenshotBytes }) }]);
  }
  await deleteObjectsLater(keys, { markupId });
}
