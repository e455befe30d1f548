import { getItem, hasPendingWork, type MarkupRecord } from '../../db/items.js';
import { clearArchivedOriginalObjects, markDeletionQueued, markWorkQueued, markWorkStarted, workDue } from '../../db/pending-work.js';
import { deleteObjectsLater, enqueueConversion, enqueueThumbnail, MAX_MARKUPS_PER_OBJECTS_JOB } from '../../events/jobs.js';
import { logger } from '../../logger.js';

/**
 * How long a markup's job may take to start before the sweep queues it again: the creating request
 * queues it right after its transaction, and an idle worker starts it within a second, so minutes
 * without a start mean the job was lost (the request died between its commit and the send).
 */
export const PENDING_WORK_GRACE_MS = 3 * 60_000;
/** Markups one sweep queues at most (a page of the index); the rest wait for the next sweep. */
export const PENDING_WORK_SWEEP_LIMIT = 200;

/**
 * Queues again the job of every markup whose pending work (a conversion, a webpage thumbnail) no
 * run took within PENDING_WORK_GRACE_MS of its last queueing, and the removal of the objects of
 * deleted markups that no job finished within that time, and of the objects of archived originals
 * whose deletion was never queued, and answers how many jobs it queued.
 * Reads one page of the pending-work index (a Query, never a Scan) and each markup, consistently.
 * A job queued twice is harmless: a conversion converts only a pending markup and settles it with
 * a conditional write (two runs store the same keys, count once), and a thumbnail is rendered only
 * while pending. A send that fails leaves the markup due for the next sweep.
 */
export async function sweepPendingWork(now = Date.now(), options: { graceMs?: number } = {}): Promise<number> {
  const due = await workDue(now - (options.graceMs ?? PENDING_WORK_GRACE_MS), PENDING_WORK_SWEEP_LIMIT);
  let queued = 0;
  for (const entry of due.filter((work) => work.kind === 'markup')) {
    const markup = await getItem(entry.markup.id, true);
    if (markup?.kind !== 'markup') continue;
    if (!hasPendingWork(markup) || markup.workStartedAt !== undefined) {
      // An entry that outlived its work (none should): out of the index, so it never crowds the page.
      await markWorkStarted(markup.id, now);
      continue;
    }
    try {
      await queueWorkOf(markup);
    } catch (error) {
      logger.error('pending work not queued again', { markupId: markup.id, error });
      continue;
    }
    queued += 1;
    await markWorkQueued(markup, now);
  }
  const deleted = due.flatMap((work) => (work.kind === 'deleted-markup' ? [work.markupId] : []));
  for (let i = 0; i < deleted.length; i += MAX_MARKUPS_PER_OBJECTS_JOB) {
    const markupIds = deleted.slice(i, i + MAX_MARKUPS_PER_OBJECTS_JOB);
    try {
      await enqueueConversion({ type: 'delete-markup-objects', markupIds });
    } catch (error) {
      logger.error('objects of deleted markups not queued for deletion again', { markupIds, error });
      continue;
    }
    queued += 1;
    for (const markupId of markupIds) await markDeletionQueued(markupId, now);
  }
  const archived = due.flatMap((work) => (work.kind === 'archived-original' ? [work] : []));
  if (archived.length > 0) {
    const objectKeys = archived.map((work) => work.objectKey);
    // A key whose send failed keeps its record (deleteObjectsLater logged why): the next sweep tries it again.
    const sent = await deleteObjectsLater(objectKeys, { markupIds: archived.map((work) => work.markupId) });
    await clearArchivedOriginalObjects(sent);
    if (sent.length > 0) queued += 1;
  }
  if (queued > 0) logger.warn('jobs of pending markups queued again', { queued, due: due.length });
  return queued;
}

async function queueWorkOf(markup: MarkupRecord): Promise<void> {
  if (markup.conversionStatus === 'pending') await enqueueConversion({ type: 'convert-markup', markupId: markup.id });
  else await enqueueThumbnail({ type: 'render-thumbnail', markupId: markup.id });
}
