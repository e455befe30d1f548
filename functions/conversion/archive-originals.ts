import * as v from 'valibot';
import { archiveOriginalsBatch } from '../../shared/domain/markups/originals.js';
import { enqueueConversion } from '../../shared/events/jobs.js';
import { defineJob } from '../../shared/events/queue-worker.js';

const Uuid = v.pipe(v.string(), v.uuid());

/**
 * Archives one batch of a workspace's retained originals and queues the job for the rest, so each
 * invocation is bounded however many originals the workspace has. A failure is retried from the
 * same position; a redelivery that races its own continuation only repeats conditional writes.
 */
export const archiveOriginalsJob = defineJob({
  schema: v.object({
    type: v.literal('archive-originals'),
    jobId: Uuid,
    workspaceId: Uuid,
    includeKept: v.boolean(),
    after: v.optional(Uuid),
  }),
  run: async (job) => {
    const next = await archiveOriginalsBatch(job);
    if (next) await enqueueConversion(next);
  },
});
