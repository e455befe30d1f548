import { getItem } from '../db/items.js';
import { logger } from '../logger.js';
import { deleteObjectsUnder, markupObjectPrefix } from '../storage/objects.js';

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
