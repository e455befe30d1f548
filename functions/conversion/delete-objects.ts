import { DeleteObjectsCommand } from '@aws-sdk/client-s3';
import * as v from 'valibot';
import { getS3 } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { MAX_MARKUPS_PER_OBJECTS_JOB } from '../../shared/events/jobs.js';
import { defineJob } from '../../shared/events/queue-worker.js';
import { deleteObjectsOfDeletedMarkups } from '../../shared/domain/markups/objects.js';

/**
 * Removes objects whose records were archived or deleted (originals, converted files). Deleting an
 * absent key succeeds, so retries are harmless; a key S3 refuses fails the job and it is retried.
 */
export const deleteObjectsJob = defineJob({
  schema: v.object({
    type: v.literal('delete-objects'),
    keys: v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1), v.maxLength(1000)),
  }),
  run: async (job) => {
    const result = await getS3().send(
      new DeleteObjectsCommand({ Bucket: getConfig().bucketName, Delete: { Objects: job.keys.map((Key) => ({ Key })), Quiet: true } }),
    );
    const failed = result.Errors ?? [];
    if (failed.length > 0) throw new Error(`could not delete ${failed.map((error) => `${error.Key}: ${error.Code}`).join(', ')}`);
  },
});

/**
 * Removes everything stored under the prefixes of deleted markups (`deleteObjectsOfDeletedMarkup`): what
 * their records named and what a conversion wrote and never recorded. A markup that exists is left
 * alone, so a stray job can never take a live markup's files. Idempotent: a retry lists less. Then
 * the records that the removal is owed go (`GONE#<markupId>`, written with each deletion), so the
 * pending-work sweep stops queueing it.
 */
export const deleteMarkupObjectsJob = defineJob({
  schema: v.object({
    type: v.literal('delete-markup-objects'),
    markupIds: v.pipe(v.array(v.pipe(v.string(), v.uuid())), v.minLength(1), v.maxLength(MAX_MARKUPS_PER_OBJECTS_JOB)),
  }),
  run: async (job) => {
    await deleteObjectsOfDeletedMarkups(job.markupIds);
  },
});
