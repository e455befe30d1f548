import * as v from 'valibot';
import { getConfig } from '../../shared/config.js';
import { carryMoveBatch, MOVE_RECHECK_SECONDS } from '../../shared/domain/items/pending-moves.js';
import { enqueueMove } from '../../shared/events/jobs.js';
import { createQueueWorker, defineJob } from '../../shared/events/queue-worker.js';

getConfig();

/**
 * One bounded batch of a recorded cross-workspace folder move, then the job for the rest (or, once
 * nothing was left, one more check a moment later), so each invocation is bounded however large
 * the tree. A redelivered or repeated job only repeats conditional writes: an item is carried, and
 * counted, once.
 */
const carryMoveJob = defineJob({
  schema: v.object({ type: v.literal('carry-move'), folderId: v.pipe(v.string(), v.uuid()) }),
  run: async (job) => {
    const outcome = await carryMoveBatch(job.folderId);
    if (outcome === 'continue') await enqueueMove(job);
    if (outcome === 'recheck') await enqueueMove(job, { delaySeconds: MOVE_RECHECK_SECONDS });
  },
});

export const handler = createQueueWorker('item-moves', { 'carry-move': carryMoveJob });
