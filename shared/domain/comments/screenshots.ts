import type { Principal } from '../../auth/principal.js';
import { getThreadScreenshot } from '../../db/screenshots.js';
import { storageChange } from '../../db/storage.js';
import { screenshotKeysOf, type ScreenshotRecord, type ScreenshotType, type ThreadRecord } from '../../db/threads.js';
import { nextTime, type TransactItem } from '../../db/core/transact.js';
import { consumeUploadItem, getUpload, type UploadRecord } from '../../db/uploads.js';
import { deleteObjectsLater, enqueueConversion } from '../../events/jobs.js';
import { BadRequestError, ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../../errors.js';
import { logger } from '../../logger.js';
import type { ScreenshotPolicyView, ScreenshotView } from '../../schemas/threads.js';
import { baseMimeType, fileTypeOf } from '../../storage/file-types.js';
import { presignedGetUrl } from '../../storage/urls.js';
import { completeUpload, issueUploadPolicy, unquoted } from '../uploads/uploads.js';
import { loadThreadAccess, loadThreadAccessToChange, type ThreadAccess } from './access.js';
import { changeThread, loadThreadRecord } from './change-thread.js';
import { withArticle } from '../../english.js';

/**
 * Thread screenshots (Threads: "Screenshot flow"): a `thread_screenshot` upload of the thread's
 * markup, posted to storage with the policy of GET screenshot-upload-policy, confirmed and attached
 * by PUT screenshot, which attaches or replaces. The conversion worker then makes a thumbnail;
 * `isProcessing` is true until it has (or gave up, with `processingError` and the
 * `comment_screenshot_failed` event). Screenshot bytes count as `images`, as the upload confirmation
 * counted them; thumbnails are the service's own and are not counted.
 */

// ---------------------------------------------------------------------------------------------
// GET /threads/:id/screenshot-upload-policy
// ---------------------------------------------------------------------------------------------

export interface ScreenshotPolicyInput {
  fileId?: string;
  filename: string;
  mimeType: string;
  filesize: number;
}

/**
 * The presigned form for a thread's screenshot: an upload policy of resource type
 * `thread_screenshot` for the thread's markup, so every rule of the upload flow holds (contributor
 * or above, displayable images only, the plan's storage limit). `metadata` names the file id and
 * the thread, which PUT screenshot takes.
 */
export async function issueScreenshotPolicy(
  principal: Principal,
  threadId: string,
  input: ScreenshotPolicyInput,
): Promise<ScreenshotPolicyView> {
  const access = await loadThreadAccessToChange(principal, threadId);
  const issued = await issueUploadPolicy(principal, {
    resourceType: 'thread_screenshot',
    resourceId: access.markup.id,
    filename: input.filename,
    contentType: input.mimeType,
    filesize: input.filesize,
    fileId: input.fileId,
  });
  return { key: issued.key, policy: issued.policy, bucket: issued.bucket, metadata: { ...issued.metadata, threadId } };
}

// ---------------------------------------------------------------------------------------------
// PUT /threads/:id/screenshot
// ---------------------------------------------------------------------------------------------

/** PUT /threads/:id/screenshot: the screenshot's fields as stored, the upload it came from, its kind (default `static`). */
export type AttachScreenshotInput = Pick<
  ScreenshotRecord,
  'key' | 'etag' | 'mimeType' | 'width' | 'height' | 'filesize' | 'originalFilename'
> & {
  fileId: string;
  type?: ScreenshotType;
};

/**
 * Attaches a posted screenshot to a thread, or replaces the one it has. The upload is confirmed as
 * POST /uploads/upload-complete would (landed, size, type and ETag match) unless it was already;
 * then one transaction writes the thread's new screenshot, consumes the upload (a file is attached
 * once) and takes a replaced screenshot's bytes off the storage counters. The replaced objects are
 * queued for deletion and the thumbnail job queued after that transaction. Attaching the file the
 * thread already shows answers it again (and queues its thumbnail job again while it is still
 * processing, which recovers a job lost after the write).
 */
export async function attachScreenshot(principal: Principal, threadId: string, input: AttachScreenshotInput): Promise<ScreenshotView> {
  const access = await loadThreadAccessToChange(principal, threadId);
  const upload = await loadScreenshotUpload(access, input);
  if (upload.state === 'consumed') return attachedAgain(access, input, upload);
  await completeUpload(principal, { fileId: input.fileId, etag: input.etag });
  const confirmed = await getUpload(input.fileId);
  if (!confirmed || confirmed.state === 'issued')
    throw new ConflictError(`Upload ${input.fileId} changed while it was attached; try again.`);

  let result;
  try {
    result = await changeThread(
      access,
      (thread) =>
        thread.screenshot?.id === input.fileId
          ? undefined
          : withScreenshot(thread, screenshotOf(input, confirmed, nextTime(thread.modifiedAt))),
      (before, after) => attachWrites(before, after),
    );
  } catch (error) {
    // A concurrent request consumed the upload: changeThread explains any refusal but the thread's
    // as the markup's, so what happened is read from the upload itself.
    if ((await getUpload(input.fileId))?.state === 'consumed') return attachedAgain(access, input, confirmed);
    throw error;
  }
  const screenshot = result.after.screenshot!;
  if (!result.changed) return toPublicScreenshot(screenshot);
  const replaced = result.before.screenshot;
  if (replaced) await deleteObjectsLater(screenshotKeysOf(replaced), { threadId, screenshotId: replaced.id });
  await queueThumbnail(access, screenshot);
  return toPublicScreenshot(screenshot);
}

/** The upload named by the body: 400 unless it is this markup's `thread_screenshot` and the body describes it. */
async function loadScreenshotUpload(access: ThreadAccess, input: AttachScreenshotInput): Promise<UploadRecord> {
  const { markup } = access;
  const upload = await getUpload(input.fileId);
  if (!upload) {
    throw new BadRequestError(
      `Upload ${input.fileId} does not exist (or its policy expired unconfirmed); request GET /threads/${access.reference.threadId}/screenshot-upload-policy first.`,
      'unknown-file',
    );
  }
  if (upload.organizationId !== markup.organizationId || upload.workspaceId !== markup.workspaceId) {
    throw new ForbiddenError(`Upload ${input.fileId} was made in another workspace than this thread's.`, 'file-in-another-workspace');
  }
  if (upload.resourceType !== 'thread_screenshot' || upload.resourceId !== markup.id) {
    throw new BadRequestError(
      `Upload ${input.fileId} is not a screenshot of this thread's markup (it is ${withArticle(upload.resourceType)} of ${upload.resourceId}); ` +
        `get its policy from GET /threads/${access.reference.threadId}/screenshot-upload-policy.`,
      'wrong-resource',
    );
  }
  const mismatches: { field: string; detail: string }[] = [];
  if (input.key !== upload.key) mismatches.push({ field: 'key', detail: `is not the key of upload ${upload.fileId} (${upload.key})` });
  if (baseMimeType(input.mimeType) !== baseMimeType(upload.contentType)) {
    mismatches.push({ field: 'mimeType', detail: `is not the type upload ${upload.fileId} was posted with (${upload.contentType})` });
  }
  if (input.filesize !== upload.filesize)
    mismatches.push({ field: 'filesize', detail: `is not the size of upload ${upload.fileId} (${upload.filesize} bytes)` });
  if (mismatches.length > 0) {
    throw new InvalidInputError(
      mismatches,
      `The body does not describe upload ${upload.fileId}: ${mismatches.map((m) => `${m.field} ${m.detail}`).join('; ')}.`,
    );
  }
  return upload;
}

/** A consumed upload: the thread's current screenshot again (idempotent PUT), else a file already used. */
async function attachedAgain(access: ThreadAccess, input: AttachScreenshotInput, upload: UploadRecord): Promise<ScreenshotView> {
  const thread = await loadThreadRecord(access.markup.id, access.reference.threadId);
  const screenshot = thread.screenshot;
  if (screenshot?.id !== input.fileId) {
    throw new BadRequestError(
      `Upload ${input.fileId} is already attached elsewhere (or was replaced); upload the file again to attach it.`,
      'file-already-used',
    );
  }
  if (unquoted(input.etag) !== unquoted(screenshot.etag)) {
    throw new BadRequestError(`Upload ${upload.fileId} was confirmed with ETag ${screenshot.etag}, not ${input.etag}.`, 'upload-mismatch');
  }
  if (screenshot.isProcessing) await queueThumbnail(access, screenshot);
  return toPublicScreenshot(screenshot);
}

function screenshotOf(input: AttachScreenshotInput, upload: UploadRecord, at: number): ScreenshotRecord {
  return {
    id: upload.fileId,
    createdAt: at,
    modifiedAt: at,
    key: upload.key,
    etag: upload.etag ?? input.etag,
    mimeType: upload.contentType,
    width: input.width,
    height: input.height,
    filesize: upload.filesize,
    originalFilename: input.originalFilename ?? upload.filename,
    type: input.type ?? 'static',
    isProcessing: true,
  };
}

function withScreenshot(thread: ThreadRecord, screenshot: ScreenshotRecord): ThreadRecord {
  return { ...thread, screenshot, modifiedAt: screenshot.modifiedAt };
}

/**
 * What goes into the thread's transaction: the upload is consumed (only from `confirmed`, so two
 * threads cannot take one file) and a replaced screenshot's bytes leave the `images` counter. The
 * new file's bytes were counted when its upload was confirmed.
 */
function attachWrites(before: ThreadRecord, after: ThreadRecord): TransactItem[] {
  const screenshot = after.screenshot!;
  const items: TransactItem[] = [consumeUploadItem(screenshot.id, after.markupId, new Date(screenshot.createdAt).toISOString())];
  if (before.screenshot) items.push({ Update: storageChange(after.organizationId, { images: -before.screenshot.filesize }) });
  return items;
}

/**
 * Queues the thumbnail job. The screenshot is already attached when this runs; if queueing fails
 * the request fails too, and the client's retry of the same PUT queues it again.
 */
async function queueThumbnail(access: ThreadAccess, screenshot: ScreenshotRecord): Promise<void> {
  try {
    await enqueueConversion({
      type: 'screenshot-thumbnail',
      markupId: access.markup.id,
      threadId: access.reference.threadId,
      screenshotId: screenshot.id,
    });
  } catch (error) {
    logger.error('screenshot thumbnail not queued', { threadId: access.reference.threadId, screenshotId: screenshot.id, error });
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// GET /threads/:id/screenshot
// ---------------------------------------------------------------------------------------------

/** GET /threads/:id/screenshot: 404 when the thread has none. Viewers may see it. */
export async function getScreenshot(principal: Principal, threadId: string): Promise<ScreenshotView> {
  const access = await loadThreadAccess(principal, threadId);
  const screenshot = await getThreadScreenshot(access.markup.id, threadId);
  if (!screenshot) throw new NotFoundError(`Thread ${threadId} has no screenshot; attach one with PUT /threads/${threadId}/screenshot.`);
  return toPublicScreenshot(screenshot);
}

/**
 * The spec's Screenshot, plus presigned links to the file (`url`) and, once the worker made it, the
 * thumbnail (`thumbnailUrl`), and why there is none (`processingError`) when processing failed.
 */
export async function toPublicScreenshot(screenshot: ScreenshotRecord): Promise<ScreenshotView> {
  const [url, thumbnailUrl] = await Promise.all([
    presignedGetUrl(screenshot.key, { contentType: screenshot.mimeType }),
    // The worker names the thumbnail after its type (thumbnail.png or thumbnail.jpg).
    screenshot.thumbnailKey
      ? presignedGetUrl(screenshot.thumbnailKey, { contentType: fileTypeOf('', screenshot.thumbnailKey)?.mimeType ?? '' })
      : Promise.resolve(undefined),
  ]);
  return {
    id: screenshot.id,
    createdAt: screenshot.createdAt,
    modifiedAt: screenshot.modifiedAt,
    mimeType: screenshot.mimeType,
    width: screenshot.width,
    height: screenshot.height,
    filesize: screenshot.filesize,
    type: screenshot.type,
    isProcessing: screenshot.isProcessing,
    url,
    ...(thumbnailUrl ? { thumbnailUrl } : {}),
    ...(screenshot.processingError ? { processingError: screenshot.processingError } : {}),
  };
}
