import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { ConversionError } from '../../shared/convert/errors.js';
import { makeScreenshotThumbnail } from '../../shared/convert/screenshots.js';
import {
  recordScreenshotFailed,
  recordScreenshotThumbnail,
  screenshotThumbnailKeyOf,
  screenshotToProcess,
} from '../../shared/domain/comments/screenshot-processing.js';
import { defineJob } from '../../shared/events/queue-worker.js';
import { logger } from '../../shared/logger.js';
import { QUEUES } from '../../shared/queues.js';
import { downloadObject, OutputObjects } from './objects.js';

/** What users see when the worker itself kept failing (after the last retry). */
export const SCREENSHOT_INTERNAL_FAILURE = 'The screenshot could not be processed because of an internal error; attach it again to retry.';

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
    const screenshot = await screenshotToProcess(job);
    if (!screenshot) return;
    const lastAttempt = Number(record.attributes.ApproximateReceiveCount) >= QUEUES.conversion.maxReceiveCount;
    const workDir = await mkdtemp(join(tmpdir(), 'screenshot-'));
    try {
      const input = join(workDir, 'source');
      await downloadObject(screenshot.key, input);
      const thumbnail = await makeScreenshotThumbnail(input);
      const key = screenshotThumbnailKeyOf(job, thumbnail.mimeType);
      await new OutputObjects().put(key, thumbnail.data, thumbnail.mimeType);
      await recordScreenshotThumbnail(job, key);
    } catch (error) {
      if (error instanceof ConversionError) {
        logger.info('screenshot not processed', { ...job, reason: error.message });
        await recordScreenshotFailed(job, error.message);
        return;
      }
      if (lastAttempt) {
        await recordScreenshotFailed(job, SCREENSHOT_INTERNAL_FAILURE).catch((failError: unknown) =>
          logger.error('screenshot failure not recorded', { ...job, error: failError }),
        );
      }
      throw error;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  },
});
