import * as v from 'valibot';
import { getConfig } from '../../shared/config.js';
import { recordUploadLanded } from '../../shared/domain/uploads/uploads.js';
import { createQueueWorker, defineJob, type JobTable } from '../../shared/events/queue-worker.js';
import { logger } from '../../shared/logger.js';

getConfig();

/** S3 encodes keys in notifications like a form: `+` for space, `%XX` for the rest. */
export function decodeEventKey(key: string): string {
  return decodeURIComponent(key.replace(/\+/g, ' '));
}

/** What upload-confirmed reads of an S3 event record; the rest of S3's shape is left unchecked. */
const ObjectCreatedRecord = v.object({
  eventTime: v.string(),
  s3: v.object({
    bucket: v.object({ name: v.string() }),
    object: v.object({ key: v.string() }),
  }),
});

const uploadJobs: JobTable = {
  /**
   * Records that an upload's object landed (size, ETag, content type), which upload-complete then
   * confirms. Objects outside the upload prefix, with no policy on record, or gone by the time the
   * notification is read (a redrive days later), are logged and left alone. Safe to run twice:
   * recordLanded writes what storage says. The notification's bucket is the upload bucket, the only
   * one that notifies this queue.
   */
  'object-created': defineJob({
    schema: v.object({ Records: v.array(ObjectCreatedRecord) }),
    async run(event) {
      for (const record of event.Records) {
        const bucket = record.s3.bucket.name;
        const key = decodeEventKey(record.s3.object.key);
        const landed = await recordUploadLanded(key, record.eventTime);
        if (landed.outcome === 'outside-prefix') logger.warn('object outside the upload prefix', { bucket, key });
        else if (landed.outcome === 'not-stored') logger.info('object no longer stored', { bucket, key, fileId: landed.fileId });
        else
          logger.info(landed.outcome === 'landed' ? 'upload landed' : 'object without an upload policy', {
            bucket,
            key,
            fileId: landed.fileId,
          });
      }
    },
  }),
  /** S3 sends one when the notification is set up, to check it may write to the queue. */
  's3-test-event': defineJob({
    schema: v.object({ Event: v.literal('s3:TestEvent'), Bucket: v.optional(v.string()) }),
    async run(event) {
      logger.info('S3 test event', { bucket: event.Bucket });
    },
  }),
};

/** S3's messages name no job: an event with `Records`, or the test event sent when the notification is set up. */
function jobTypeOf(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  if ((message as { Event?: unknown }).Event === 's3:TestEvent') return 's3-test-event';
  return Array.isArray((message as { Records?: unknown }).Records) ? 'object-created' : undefined;
}

/**
 * Runs on the uploads queue, where S3 sends the upload prefix's ObjectCreated notifications: a
 * notification it fails on is retried, then waits in the dead-letter queue for `admin queue redrive`.
 */
export const handler = createQueueWorker('upload-confirmed', uploadJobs, { jobTypeOf });
