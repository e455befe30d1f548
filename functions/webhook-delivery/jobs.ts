import type { JobTable } from '../../shared/events/queue-worker.js';

/**
 * Jobs of the webhook-delivery worker, by message `type`. The webhooks issue adds the signed
 * delivery job here; until then a message of any type fails and ends in the dead-letter queue.
 */
export const webhookDeliveryJobs: JobTable = {};
