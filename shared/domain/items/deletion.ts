import { forEachLimit } from '../../concurrency.js';
import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import { isTransactionConflict } from '../../db/core/errors.js';
import { failIfArmed } from '../../db/core/faults.js';
import { getItems, itemKey, markupDelete, type ItemRecord, type MarkupRecord } from '../../db/items.js';
import { deleteMarkupSideRecords } from '../../db/markup-records.js';
import { deletedMarkupObjectsPut, putDeletedMarkupObjects } from '../../db/pending-work.js';
import { deleteThreadIndex, pageCopyDelete } from '../../db/thread-index.js';
import { getOriginal } from '../../db/originals.js';
import { storageChange, type StorageCategory } from '../../db/storage.js';
import { messageKey, messageReferenceKey } from '../../db/messages.js';
import { getConversation, storedObjectsOf, threadDelete, type Conversation, type ThreadRecord } from '../../db/threads.js';
import { batchDelete, tryTransact, type TransactItem } from '../../db/core/transact.js';
import { deleteMarkupObjectsLater, deleteObjectsLater } from '../../events/jobs.js';
import { ConflictError } from '../../errors.js';
import { markupObjectPrefix } from '../../storage/objects.js';
import { archiveAndQueueDeletion } from '../markups/originals.js';

/** BatchWriteItem calls kept in flight at once; a 2000-markup folder is 80 of them. */
const PARALLEL_BATCHES = 8;
/** Markups deleted in one transaction (each with its GONE# record, and their organization's counters: at most 100 items). */
const MARKUPS_PER_TRANSACTION = 49;
/** Threads deleted in one transaction: three items each (thread, reference and page copy), plus the counters. */
const THREADS_PER_TRANSACTION = 30;
/** How long a deletion keeps retrying writes that collide with concurrent ones (other deletions, comments). */
const CONTENTION = { attempts: Number.POSITIVE_INFINITY, budgetMs: 10_000, capMs: 250 } as const;

/**
 * Removes item records (folders and markups). Callers decide what to remove (a folder's whole
 * subtree, a set of markups) and in what order (one call finishes before it returns).
 *
 * Every stored byte is freed exactly once, however many deletions of the same markup run at once:
 * a retained original is archived (conditional on its state); each thread goes in a transaction
 * conditioned on its revision that also takes its attachments' and screenshot's bytes off the
 * counters; each markup record goes in a transaction conditioned on the record as read that also
 * takes off the bytes of its own files (images, pages, video). Only the write that succeeded
 * queues the objects for deletion: the files its record names outside the markup's prefix (uploaded
 * images) by key, and the whole prefix (`markupObjectPrefix`), which also holds what a conversion or
 * thumbnail running at that moment wrote and never recorded (DESIGN.md "Deletion takes everything").
 * The record goes with a `GONE#<markupId>` record (in the same transaction, or just before), which
 * the prefix job removes once done: a deletion that dies before queueing it is found by the sweep.
 * The conversation is deleted again after the markup, as a thread committed meanwhile would
 * otherwise be left behind; none can be added once the markup is gone.
 */
export async function deleteItemRecords(records: readonly ItemRecord[]): Promise<void> {
  const markups = records.filter((record): record is MarkupRecord => record.kind === 'markup');
  await forEachLimit(
    markups.filter((record) => record.hasRetainedOriginal || record.source),
    PARALLEL_BATCHES,
    (record) => archiveOriginalOf(record.id),
  );
  await forEachLimit(markups, PARALLEL_BATCHES, async (record) => {
    await deleteConversationOf(record.id);
    await failIfArmed('after-conversation-deletion', record.id);
  });
  // Records without counted bytes need no transaction: deleting them twice frees nothing twice. A
  // pending conversion may count its outputs any moment, so it is deleted as read, conditionally.
  const counted = markups.filter((record) => record.conversionStatus === 'pending' || hasCountedBytes(storedFilesOf(record)));
  for (const group of markupGroups(counted)) await deleteMarkupGroup(group);
  const uncounted = markups.filter((record) => !counted.includes(record));
  // Written before the records go: a deletion that dies after it leaves the sweep a job to queue.
  await putDeletedMarkupObjects(
    uncounted.map((record) => record.id),
    Date.now(),
  );
  await forEachLimit(chunksOf(uncounted, 25), PARALLEL_BATCHES, (chunk) => batchDelete(chunk.map((record) => itemKey(record.id))));
  await deleteStoredObjectsLater(uncounted);
  await forEachLimit(markups, PARALLEL_BATCHES, async (record) => {
    await deleteConversationOf(record.id);
    await deleteThreadIndex(record.id);
    await deleteMarkupSideRecords(record.id);
  });
  const folders = records.filter((record) => record.kind === 'folder');
  await forEachLimit(chunksOf(folders, 25), PARALLEL_BATCHES, (chunk) => batchDelete(chunk.map((record) => itemKey(record.id))));
}

async function archiveOriginalOf(markupId: string): Promise<void> {
  const original = await getOriginal(markupId);
  if (original?.state === 'retained') await archiveAndQueueDeletion(original);
}

/** The files a markup record stores itself (its original aside) and the counters their bytes are in. */
export function storedFilesOf(markup: MarkupRecord): { keys: string[]; bytes: Partial<Record<StorageCategory, number>> } {
  const images = markup.images ?? [];
  const pages = (markup.document?.pages ?? []).flatMap((page) => (page.image ? [page.image] : []));
  const video = markup.video ? [markup.video.file, markup.video.poster] : [];
  const sum = (files: readonly { filesize: number }[]) => files.reduce((total, file) => total + file.filesize, 0);
  return {
    keys: [...[...images, ...pages, ...video].map((file) => file.key), ...(markup.thumbnailKey ? [markup.thumbnailKey] : [])],
    bytes: { images: sum(images), pdfs: sum(pages), videos: sum(video) },
  };
}

/** Queues the objects of deleted markup records: the prefix of each, and the keys its record names outside it. */
async function deleteStoredObjectsLater(markups: readonly MarkupRecord[]): Promise<void> {
  if (markups.length === 0) return;
  const outside = markups.flatMap((markup) => storedFilesOf(markup).keys.filter((key) => !key.startsWith(markupObjectPrefix(markup.id))));
  await deleteObjectsLater(outside, { markupIds: markups.map((markup) => markup.id) });
  await deleteMarkupObjectsLater(markups.map((markup) => markup.id));
}

const hasCountedBytes = (files: ReturnType<typeof storedFilesOf>) => Object.values(files.bytes).some((bytes) => bytes > 0);

/** Markups by organization (one counters item per transaction), at most MARKUPS_PER_TRANSACTION to a group. */
function markupGroups(markups: readonly MarkupRecord[]): MarkupRecord[][] {
  const byOrganization = new Map<string, MarkupRecord[]>();
  for (const markup of markups) byOrganization.set(markup.organizationId, [...(byOrganization.get(markup.organizationId) ?? []), markup]);
  return [...byOrganization.values()].flatMap((list) => chunksOf(list, MARKUPS_PER_TRANSACTION));
}

/**
 * Deletes a group of markup records and takes their files' bytes off the counters in one
 * transaction. When a record changed or went since it was read, the group is read again: a record
 * that is gone was deleted, bytes and all, by a concurrent deletion.
 */
async function deleteMarkupGroup(group: readonly MarkupRecord[]): Promise<void> {
  let pending = [...group];
  await withBackoff(
    async () => {
      const stored = pending.map(storedFilesOf);
      const freed = negated(addUp(stored.map((files) => files.bytes)));
      const at = Date.now();
      const items: TransactItem[] = [
        ...pending.map(markupDelete),
        ...pending.map((markup) => deletedMarkupObjectsPut(markup.id, at)),
        // A record read again may hold no counted file any more (a conversion that failed meanwhile).
        ...(Object.keys(freed).length > 0 ? [{ Update: storageChange(pending[0]!.organizationId, freed) }] : []),
      ];
      if (await committed(items)) {
        await deleteStoredObjectsLater(pending);
        return undefined;
      }
      const ids = new Set(pending.map((markup) => markup.id));
      pending = (await getItems([...ids], true)).filter((item): item is MarkupRecord => item.kind === 'markup' && ids.has(item.id));
      return pending.length > 0 ? AGAIN : undefined;
    },
    { ...CONTENTION, exhausted: () => new ConflictError('The markups are being changed by another request; try the deletion again.') },
  );
}

/**
 * What a markup's conversation keeps: its threads, with their messages, references, attachments and
 * screenshots. Threads go in transactions conditioned on their revision that also take the stored
 * bytes off the counters; when one changed or went meanwhile, the conversation is read again.
 */
async function deleteConversationOf(markupId: string): Promise<void> {
  await withBackoff(
    async () => {
      const { threads, messages } = await getConversation(markupId);
      for (const batch of chunksOf(threads, THREADS_PER_TRANSACTION)) {
        if (!(await deleteThreads(batch, messages))) return AGAIN;
      }
      return undefined;
    },
    {
      ...CONTENTION,
      exhausted: () => new ConflictError('The comments of a markup are being changed by another request; try the deletion again.'),
    },
  );
}

async function deleteThreads(threads: readonly ThreadRecord[], messages: Conversation['messages']): Promise<boolean> {
  const stored = threads.map((thread) => storedObjectsOf(thread, messages.get(thread.id) ?? []));
  const attachments = stored.reduce((sum, files) => sum + files.attachmentBytes, 0);
  const screenshots = stored.reduce((sum, files) => sum + files.screenshotBytes, 0);
  const items: TransactItem[] = [
    ...threads.flatMap((thread) => [
      ...threadDelete(thread),
      // A page never shows a thread that is gone, also while its markup's deletion goes on.
      pageCopyDelete(thread),
    ]),
    ...(attachments + screenshots > 0
      ? [{ Update: storageChange(threads[0]!.organizationId, { attachments: -attachments, images: -screenshots }) }]
      : []),
  ];
  if (!(await committed(items))) return false;
  await batchDelete(
    threads.flatMap((thread) =>
      (messages.get(thread.id) ?? []).flatMap((message) => [
        messageKey(thread.markupId, thread.id, message.id),
        messageReferenceKey(message.id),
      ]),
    ),
  );
  await deleteObjectsLater(
    stored.flatMap((files) => files.keys),
    { threadIds: threads.map((thread) => thread.id) },
  );
  return true;
}

/** True when the transaction committed; false when a condition failed or it collided with another (read again). */
async function committed(items: TransactItem[]): Promise<boolean> {
  try {
    return (await tryTransact(items)).length === 0;
  } catch (error) {
    if (isTransactionConflict(error)) return false;
    throw error;
  }
}

function addUp(list: readonly Partial<Record<StorageCategory, number>>[]): Partial<Record<StorageCategory, number>> {
  const total: Partial<Record<StorageCategory, number>> = {};
  for (const bytes of list)
    for (const [category, value] of Object.entries(bytes) as [StorageCategory, number][]) total[category] = (total[category] ?? 0) + value;
  return total;
}

const negated = (bytes: Partial<Record<StorageCategory, number>>) =>
  Object.fromEntries(
    Object.entries(bytes)
      .filter(([, value]) => value > 0)
      .map(([category, value]) => [category, -value]),
  ) as Partial<Record<StorageCategory, number>>;

function chunksOf<T>(list: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < list.length; i += size) chunks.push(list.slice(i, i + size));
  return chunks;
}
