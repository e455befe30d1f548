import type { JobTable } from '../../shared/events/queue-worker.js';

/**
 * Jobs of the conversion worker, by message `type`. The uploads and markups issues add the page
 * renderer and the file converters here; until then a message of any type fails and, after the
 * queue's maxReceiveCount, rests in the dead-letter queue.
 */
export const conversionJobs: JobTable = {};
