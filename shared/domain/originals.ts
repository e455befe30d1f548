import { getItem, type MarkupRecord } from '../db/items.js';
import { archiveOriginal, getOriginal, keepOriginal, retainedOriginalsPartition, type OriginalRecord } from '../db/originals.js';
import { queryAll } from '../db/paging.js';
import { getWorkspace } from '../db/workspaces.js';
import { deleteObjectsLater } from '../events/jobs.js';
import { BadRequestError, NotFoundError } from '../http/errors.js';
import { presignedGetUrl } from '../storage/urls.js';

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
  if (!(await archiveOriginal(original))) return false;
  await deleteObjectsLater([original.key], { markupId: original.markupId });
  return true;
}

/** DELETE /markups/:id/original: archives the retained original and answers its size. */
export async function archiveMarkupOriginal(markup: MarkupRecord): Promise<{ archivedFileSize: number }> {
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
    throw new BadRequestError('The original file was already archived and cannot be retained again; upload it again to keep a copy.', 'original-archived');
  }
  if (!(await keepOriginal(markup.id))) throw new NotFoundError(`Markup ${markup.id} does not exist.`);
}

/** GET /markups/:id/original/download-url: a short-lived presigned URL that downloads the original. */
export async function originalDownload(markup: MarkupRecord): Promise<{ url: string; filename: string; mimeType: string; filesize: number }> {
  const original = await retainedOriginalOf(markup);
  return {
    url: await presignedGetUrl(original.key, { ttlSeconds: ORIGINAL_URL_TTL_SECONDS, downloadAs: original.filename }),
    filename: original.filename,
    mimeType: original.mimeType,
    filesize: original.filesize,
  };
}

/**
 * Archives every retained original of a workspace that its markup does not explicitly keep
 * (`retainOriginal: true` survives NEVER_STORE, States and transitions); returns how many.
 * `includeKept` also archives those (archive-all).
 */
export async function archiveRetainedOriginals(workspaceId: string, options: { includeKept: boolean }): Promise<number> {
  let archived = 0;
  for await (const item of queryAll('GSI1', retainedOriginalsPartition(workspaceId))) {
    const original = item as unknown as OriginalRecord;
    if (!options.includeKept) {
      const markup = await getItem(original.markupId);
      if (markup?.kind === 'markup' && markup.retainOriginal === true) continue;
    }
    if (await archiveAndQueueDeletion(original)) archived += 1;
  }
  return archived;
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
