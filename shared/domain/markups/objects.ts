import { getItem, type MarkupRecord, type StoredFile } from '../../db/items.js';
import { clearDeletedMarkupObjects } from '../../db/pending-work.js';
import { logger } from '../../logger.js';
import { deleteObjectsUnder, markupObjectPrefix } from '../../storage/objects.js';

/** A file stored for a markup (an original, a converted page): its key, type, size and name. */
export type { StoredFile };

/**
 * Deletes every object under a deleted markup's prefix (`markupObjectPrefix`); answers false, and
 * deletes nothing, when the markup exists. Called by the deletion's job after the record went and
 * by every writer that finds, after writing, that the markup is gone (a conversion, a thumbnail, a
 * redelivered job): whichever of the deletion and a late write comes second removes what the other
 * left, so nothing stays behind whatever the order. The markup's bytes were taken off the counters
 * with its record; what a late writer stored was never counted.
 */
export async function deleteObjectsOfDeletedMarkup(markupId: string): Promise<boolean> {
  if (await getItem(markupId, true)) return false;
  const deleted = await deleteObjectsUnder(markupObjectPrefix(markupId));
  if (deleted > 0) logger.info('objects of a deleted markup removed', { markupId, objects: deleted });
  return true;
}

/**
 * The markup a worker's job names, read consistently; undefined when it is not a markup, and when
 * it is gone, once its prefix is emptied (`deleteObjectsOfDeletedMarkup`): a job that finds its
 * markup deleted takes away what its earlier runs may have stored.
 */
export async function markupOfJob(markupId: string): Promise<MarkupRecord | undefined> {
  const item = await getItem(markupId, true);
  if (!item) {
    await deleteObjectsOfDeletedMarkup(markupId);
    return undefined;
  }
  return item.kind === 'markup' ? item : undefined;
}

/**
 * The job of the pending-work records of deleted markups (`GONE#<markupId>`): each deleted markup's
 * prefix emptied, then the records cleared, so the pending-work sweep stops queueing them. A markup
 * that exists is left alone (and its record goes too: it was not deleted after all).
 */
export async function deleteObjectsOfDeletedMarkups(markupIds: readonly string[]): Promise<void> {
  for (const markupId of markupIds) await deleteObjectsOfDeletedMarkup(markupId);
  await clearDeletedMarkupObjects(markupIds);
}
