import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { ConversionError } from '../../shared/convert/errors.js';
import { makeScreenshotThumbnail } from '../../shared/convert/screenshots.js';
import { getItem } from '../../shared/db/items.js';
import { getThreadScreenshot, screenshotThumbnailKey, settleScreenshot, type ScreenshotOutcome } from '../../shared/db/screenshots.js';
import { commentEvent } from '../../shared/domain/comments/events.js';
import { defineJob } from '../../shared/events/queue-worker.js';
import { logger } from '../../shared/logger.js';
import { QUEUES } from '../../shared/queues.js';
import { deleteObject } from '../../shared/storage/objects.js';
import { downloadObject, OutputObjects } from './objects.js';

/** What users see when the worker itself kept failing (after the last retry). */
export const SCREENSHOT_INTERNAL_FAILURE = 'The screenshot could not be processed because of an internal error; attach it again to retry.';

type Job = { markupId: string; threadId: string; screenshotId: string };

/**
 * Makes the thumbnail of a thread screenshot and ends its processing (PUT /threads/:id/screenshot
 * queues it). Idempotent under at-least-once delivery: only a screenshot the thread still holds and
 * that is still processing is worked on; the thumbnail goes to a fixed key; and the write that ends
 * processing is conditional on both, so exactly one run settles it. A run whose screenshot was
 * replaced or deleted meanwhile removes the thumbnail it stored. A file that is not a readable image
 * ends processing with `processingError` and the `comment_screenshot_failed` event; other failures
 * are retried, and the last delivery before the dead-letter queue records the failure, so no
 * screenshot stays processing.
 */
export const screenshotThumbnailJob = defineJob({
  schema: v.object({
    type: v.literal('screenshot-thumbnail'),
    markupId: v.pipe(v.string(), v.uuid()),
    threadId: v.pipe(v.string(), v.uuid()),
    screenshotId: v.pipe(v.string(), v.uuid()),
  }),
  run: async (job, record) => {
    const screenshot = await getThreadScreenshot(job.markupId, job.threadId);
    if (screenshot?.id !== job.screenshotId || !screenshot.isProcessing) return;
    const lastAttempt = Number(record.attributes.ApproximateReceiveCount) >= QUEUES.conversion.maxReceiveCount;
    const workDir = await mkdtemp(join(tmpdir(), 'screenshot-'));
    try {
      const input = join(workDir, 'source');
      await downloadObject(screenshot.key, input);
      const thumbnail = await makeScreenshotThumbnail(input);
      const key = screenshotThumbnailKey(job.markupId, job.threadId, job.screenshotId, thumbnail.mimeType === 'image/png' ? 'png' : 'jpg');
      await new OutputObjects().put(key, thumbnail.data, thumbnail.mimeType);
      if (!(await settleScreenshot(job.markupId, job.threadId, job.screenshotId, { thumbnailKey: key }))) await afterLostRace(job, key);
    } catch (error) {
      if (error instanceof ConversionError) {
        logger.info('screenshot not processed', { ...job, reason: error.message });
        await fail(job, { processingError: error.message });
        return;
      }
      if (lastAttempt) {
        await fail(job, { processingError: SCREENSHOT_INTERNAL_FAILURE }).catch((failError: unknown) =>
          logger.error('screenshot failure not recorded', { ...job, error: failError }),
        );
      }
      throw error;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  },
});

/**
 * The screenshot was settled, replaced or deleted while this run worked. A concurrent run of the
 * same job settled it with this very key (same screenshot, same bytes): the object stays. Otherwise
 * nothing refers to it and it goes.
 */
async function afterLostRace(job: Job, key: string): Promise<void> {
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
async function fail(job: Job, outcome: Extract<ScreenshotOutcome, { processingError: string }>): Promise<void> {
  const markup = await getItem(job.markupId, true);
  const also = markup?.kind === 'markup' ? [commentEvent('comment_screenshot_failed', markup, { threadId: job.threadId }, undefined)] : [];
  await settleScreenshot(job.markupId, job.threadId, job.screenshotId, outcome, { also });
}
