import { countArchived, finishArchiveJob, getArchiveJob, insertArchiveJob, newArchiveJob } from '../../db/archive-jobs.js';
import { getItem, type MarkupRecord } from '../../db/items.js';
import {
  archiveOriginal,
  countRetainedOriginals,
  getOriginal,
  keepOriginal,
  retainedOriginalsAfter,
  type OriginalRecord,
} from '../../db/originals.js';
import { archivedOriginalObjectPut, clearArchivedOriginalObjects } from '../../db/pending-work.js';
import { getWorkspace } from '../../db/workspaces.js';
import { deleteObjectsLater, enqueueConversion, type ArchiveOriginalsJob } from '../../events/jobs.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { presignedGetUrl } from '../../storage/urls.js';
import type { ArchivedOriginalView, OriginalDownloadView } from '../../schemas/markups.js';

/** Download URLs for originals live briefly: they hand out the whole source file. */
export const ORIGINAL_URL_TTL_SECONDS = 300;

async function retainedOriginalOf(markup: MarkupRecord): Promise<OriginalRecord> {
  const original = await getOriginal(markup.id);
  if (original?.state !== 'retained') throw new NotFoundError(`Markup ${markup.id} has no retained original file.`);
  return original;
}

/**
 * Archives a retained original (state, markup flags and stored bytes in one transaction) and queues
 * its object for deletion from storage. False when it was no longer retained.
 */
export async function archiveAndQueueDeletion(original: OriginalRecord): Promise<boolean> {
  if (!(await archiveOriginal(original, undefined, [archivedOriginalObjectPut(original.key, original.markupId, Date.now())]))) return false;
  await clearArchivedOriginalObjects(await deleteObjectsLater([original.key], { markupId: original.markupId }));
  return true;
}

/** DELETE /markups/:id/original: archives the retained original and answers its size. */
export async function archiveMarkupOriginal(markup: MarkupRecord): Promise<ArchivedOriginalView> {
  const original = await retainedOriginalOf(markup);
  if (!(await archiveAndQueueDeletion(original))) throw new NotFoundError(`Markup ${markup.id} has no retained original file.`);
  return { archivedFileSize: original.filesize };
}

/**
 * PATCH /markups/:id/original. `true` keeps the original even under NEVER_STORE, but cannot bring
 * back one already archived (400); `false` archives a retained original (and is a no-op when there
 * is none left).
 */
export async function setRetainOriginal(markup: MarkupRecord, retain: boolean): Promise<void> {
  const original = await getOriginal(markup.id);
  if (!original) throw new NotFoundError(`Markup ${markup.id} has no original file.`);
  if (!retain) {
    if (original.state === 'retained') await archiveAndQueueDeletion(original);
    return;
  }
  if (original.state === 'archived') {
    throw new BadRequestError(
      'The original file was already archived and cannot be retained again; upload it again to keep a copy.',
      'original-archived',
    );
  }
  if (!(await keepOriginal(markup.id))) throw new NotFoundError(`Markup ${markup.id} does not exist.`);
}

/** GET /markups/:id/original/download-url: a short-lived presigned URL that downloads the original. */
export async function originalDownload(markup: MarkupRecord): Promise<OriginalDownloadView> {
  const original = await retainedOriginalOf(markup);
  return {
    url: await presignedGetUrl(original.key, {
      ttlSeconds: ORIGINAL_URL_TTL_SECONDS,
      contentType: original.mimeType,
      downloadAs: original.filename,
    }),
    filename: original.filename,
    mimeType: original.mimeType,
    filesize: original.filesize,
  };
}

export type { ArchiveOriginalsJob };

/** Originals one invocation of an archive job archives at most: a few seconds of transactions. */
export const ARCHIVE_BATCH_SIZE = 100;

/**
 * Starts archiving every retained original of a workspace that its markup does not explicitly keep
 * (`retainOriginal: true` survives NEVER_STORE, States and transitions); `includeKept` archives
 * those too (archive-all). The request only counts them, records the job and queues it: the
 * archiving itself runs in the worker (archiveOriginalsBatch), so a large workspace never holds a
 * request past its timeout. Answers the job's id and how many originals it will archive.
 */
export async function startArchivingOriginals(
  workspaceId: string,
  options: { includeKept: boolean },
): Promise<{ jobId: string; archivedCount: number }> {
  const expectedCount = await countRetainedOriginals(workspaceId, options);
  const record = newArchiveJob({ workspaceId, includeKept: options.includeKept, expectedCount });
  await insertArchiveJob(record);
  await enqueueConversion({ type: 'archive-originals', jobId: record.jobId, workspaceId, includeKept: options.includeKept });
  return { jobId: record.jobId, archivedCount: expectedCount };
}

/**
 * One invocation of an archive job: archives up to `limit` retained originals after `job.after`
 * and answers the job for the rest (undefined once the job is done). Resumable and idempotent: each
 * original is archived, and counted in the job record, in one conditional transaction, so a
 * redelivered batch archives and counts only what is still retained; archived originals leave the
 * index, so any position stays valid. Their objects are queued for deletion together; each
 * archive's transaction also records that its object is still to be removed
 * (`archivedOriginalObjectPut`), so an invocation killed before the enqueue leaves the pending-work
 * sweep a deletion to queue, not an object in storage for good.
 */
export async function archiveOriginalsBatch(
  job: ArchiveOriginalsJob,
  limit = ARCHIVE_BATCH_SIZE,
): Promise<ArchiveOriginalsJob | undefined> {
  const record = await getArchiveJob(job.jobId);
  if (record?.state !== 'running') return undefined;
  const { originals, next } = await retainedOriginalsAfter(job.workspaceId, { after: job.after, limit, includeKept: job.includeKept });
  const archivedKeys: string[] = [];
  for (const original of originals) {
    // The mirror on the original may predate an explicit choice recorded only on the markup.
    if (!job.includeKept && (await keptByMarkup(original))) continue;
    const pending = archivedOriginalObjectPut(original.key, original.markupId, Date.now());
    if (await archiveOriginal(original, undefined, [countArchived(job.jobId), pending])) archivedKeys.push(original.key);
  }
  await clearArchivedOriginalObjects(await deleteObjectsLater(archivedKeys, { jobId: job.jobId, workspaceId: job.workspaceId }));
  if (next) return { ...job, after: next };
  await finishArchiveJob(job.jobId);
  return undefined;
}

async function keptByMarkup(original: OriginalRecord): Promise<boolean> {
  const markup = await getItem(original.markupId);
  return markup?.kind === 'markup' && markup.retainOriginal === true;
}

/**
 * Once a markup's conversion is over, a workspace under NEVER_STORE gives up the original, unless
 * the markup explicitly keeps it (`retainOriginal`). Under the other policies it stays.
 */
export async function applyPolicyAfterConversion(markupId: string): Promise<void> {
  const item = await getItem(markupId, true);
  if (item?.kind !== 'markup' || !item.hasRetainedOriginal || item.retainOriginal) return;
  const workspace = await getWorkspace(item.workspaceId);
  if (workspace?.originalFileStoragePolicy !== 'NEVER_STORE') return;
  const original = await getOriginal(markupId);
  if (original?.state === 'retained') await archiveAndQueueDeletion(original);
}
