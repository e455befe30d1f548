import type { JobTable } from '../../shared/events/queue-worker.js';

/**
 * Jobs of the conversion worker, by message `type`. The uploads issue adds the file converters
 * here; until then a message of any type fails and, after maxReceiveCount, rests in the DLQ.
 * (Webpage thumbnails have their own x86-64 worker: functions/thumbnail-renderer.)
 */
export const conversionJobs: JobTable = {};
