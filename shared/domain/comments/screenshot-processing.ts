import { getItem } from '../../db/items.js';
import { getThreadScreenshot, screenshotThumbnailKey, settleScreenshot } from '../../db/screenshots.js';
import type { ScreenshotRecord } from '../../db/threads.js';
import { logger } from '../../logger.js';
import { deleteObject } from '../../storage/objects.js';
import { commentEvent } from './events.js';

/**
 * The end of a thread screenshot's processing, as the conversion worker's `screenshot-thumbnail`
 * job records it (Threads: "Screenshot flow"): the thumbnail made, or the reason it could not be.
 * Each write is conditional on the thread still holding that screenshot, still processing, so
 * exactly one run settles it however often the job is delivered.
 */

/** The screenshot one job works on. */
export type ScreenshotJob = { markupId: string; threadId: string; screenshotId: string };

/** Where a screenshot's thumbnail goes: one fixed key per screenshot, so a retried job overwrites its own. */
export const screenshotThumbnailKeyOf = (job: ScreenshotJob, mimeType: string): string =>
  screenshotThumbnailKey(job.markupId, job.threadId, job.screenshotId, mimeType === 'image/png' ? 'png' : 'jpg');

/** The screenshot to work on: the one the job names, while the thread still holds it and it is processing. */
export async function screenshotToProcess(job: ScreenshotJob): Promise<ScreenshotRecord | undefined> {
  const screenshot = await getThreadScreenshot(job.markupId, job.threadId);
  return screenshot?.id === job.screenshotId && screenshot.isProcessing ? screenshot : undefined;
}

/**
 * Records the stored thumbnail. When the screenshot was settled, replaced or deleted while this run
 * worked: a concurrent run of the same job settled it with this very key (same screenshot, same
 * bytes), and the object stays; otherwise nothing refers to it and it goes.
 */
export async function recordScreenshotThumbnail(job: ScreenshotJob, key: string): Promise<void> {
  if (await settleScreenshot(job.markupId, job.threadId, job.screenshotId, { thumbnailKey: key })) return;
  const current = await getThreadScreenshot(job.markupId, job.threadId);
  if (current?.id === job.screenshotId && current.thumbnailKey === key) return;
  logger.info('screenshot replaced or deleted during processing', job);
  await deleteObject(key).catch((error: unknown) => logger.warn('screenshot thumbnail not removed', { ...job, key, error }));
}

/**
 * Ends processing with the reason and `comment_screenshot_failed` in one transaction, so the run
 * that ends it (and only that one) records the event. A markup gone meanwhile takes its threads
 * with it: nothing is left to notify about.
 */
export async function recordScreenshotFailed(job: ScreenshotJob, processingError: string): Promise<void> {
  const markup = await getItem(job.markupId, true);
  const also = markup?.kind === 'markup' ? [commentEvent('comment_screenshot_failed', markup, { threadId: job.threadId }, undefined)] : [];
  await settleScreenshot(job.markupId, job.threadId, job.screenshotId, { processingError }, { also });
}
