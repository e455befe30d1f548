import * as v from 'valibot';
import { getConfig } from '../../shared/config.js';
import { attemptWebhookDelivery } from '../../shared/domain/webhooks/deliveries.js';
import type { WebhookDeliveryJob } from '../../shared/events/jobs.js';
import { defineJob } from '../../shared/events/queue-worker.js';
import { addressPolicy } from '../../shared/render/url-safety.js';
import { postWebhook } from './post.js';

const EventSchema = v.looseObject({
  id: v.string(),
  type: v.string(),
  workspaceId: v.string(),
  createdAt: v.string(),
});

const JobSchema = v.object({
  type: v.literal('deliver-webhook'),
  registrationId: v.string(),
  event: EventSchema,
  attempt: v.pipe(v.number(), v.integer(), v.minValue(1)),
  notBefore: v.optional(v.number()),
  redelivery: v.optional(v.literal(true)),
  previousAttemptId: v.optional(v.string()),
});

/**
 * One attempt of one delivery (`attemptWebhookDelivery`), posted by this worker's HTTP client to
 * the addresses the stack's mode allows (deployed: public addresses only).
 */
export async function deliverWebhook(job: WebhookDeliveryJob, messageId: string): Promise<void> {
  await attemptWebhookDelivery(job, messageId, (url, body, headers) =>
    postWebhook(url, body, headers, { allowed: addressPolicy(getConfig().mode) }),
  );
}

export const deliverWebhookJob = defineJob({
  schema: JobSchema,
  run: async (job, record) => deliverWebhook(job as WebhookDeliveryJob, record.messageId),
});
