import type { JobTable } from '../../shared/events/queue-worker.js';
import { deliverWebhookJob } from './deliver.js';

/** Jobs of the webhook-delivery worker, by message `type`: one signed attempt per message. */
export const webhookDeliveryJobs: JobTable = {
  'deliver-webhook': deliverWebhookJob,
};
