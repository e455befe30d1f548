import { getConfig } from '../../shared/config.js';
import { createQueueWorker } from '../../shared/events/queue-worker.js';
import { webhookDeliveryJobs } from './jobs.js';

getConfig();

export const handler = createQueueWorker('webhook-delivery', webhookDeliveryJobs);
