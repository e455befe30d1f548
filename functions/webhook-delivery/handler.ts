import { getConfig } from '../../shared/config.js';
import { createQueueWorker } from '../../shared/events/queue-worker.js';
import { webhookDeliveryJobs } from './jobs.js';

getConfig();

// Concurrent: one receiver that hangs for its 15 s never holds back another's delivery in the batch.
export const handler = createQueueWorker('webhook-delivery', webhookDeliveryJobs, { concurrent: true });
