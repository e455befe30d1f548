import * as v from 'valibot';
import { getConfig } from '../../shared/config.js';
import { failIfArmed, InjectedFault } from '../../shared/db/faults.js';
import { recordDeliveryAttempt, timeOrderedId } from '../../shared/db/webhook-deliveries.js';
import {
  clearWebhookFailing,
  getWebhookRegistration,
  markWebhookFailing,
  updateWebhookRegistration,
  type WebhookRegistrationRecord,
} from '../../shared/db/webhooks.js';
import { enqueueWebhookDeliveries, MAX_DELAY_SECONDS, sendWebhookDeadLetter, type WebhookDeliveryJob } from '../../shared/events/jobs.js';
import { defineJob, WorkerCrash } from '../../shared/events/queue-worker.js';
import { eventBody } from '../../shared/domain/webhook-events.js';
import { classifyAttempt, FAILING_DISABLE_AFTER_MS, retryDelayMs } from '../../shared/domain/webhook-retries.js';
import { signWebhook } from '../../shared/domain/webhook-signature.js';
import { logger } from '../../shared/logger.js';
import { addressPolicy } from '../../shared/render/url-safety.js';
import { postWebhook } from './post.js';

/** A job due within this much is attempted now rather than put back. */
const EARLY_TOLERANCE_MS = 1_000;

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
});

/** Whether the registration still takes this event: `webhook.test` goes to any existing registration. */
function accepts(registration: WebhookRegistrationRecord, job: WebhookDeliveryJob): boolean {
  if (job.event.type === 'webhook.test') return true;
  return registration.enabled && (registration.eventTypes === null || registration.eventTypes.includes(job.event.type));
}

/**
 * One attempt of one delivery (DESIGN.md "Webhook deliveries"). A job not yet due goes back on the
 * queue for the rest of its wait (SQS delays at most 15 minutes, retries wait up to 10 hours). The
 * attempt is signed with the registration's key of this moment and logged; then 2xx clears the
 * failing mark, 410 disables, 5xx/429/no answer schedules the next attempt (after the last: the
 * dead-letter queue), any other status ends the delivery; a redelivery is never retried.
 */
export async function deliverWebhook(job: WebhookDeliveryJob): Promise<void> {
  const waitMs = (job.notBefore ?? 0) - Date.now();
  if (waitMs > EARLY_TOLERANCE_MS) {
    await enqueueWebhookDeliveries([job], { delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.ceil(waitMs / 1000)) });
    return;
  }
  const registration = await getWebhookRegistration(job.registrationId);
  if (!registration || !accepts(registration, job)) {
    logger.info('webhook delivery dropped', { registrationId: job.registrationId, eventId: job.event.id, registration: registration ? 'not accepting' : 'gone' });
    return;
  }
  const body = await eventBody(job.event);
  const attemptedAt = new Date();
  const headers = signWebhook({ id: job.event.id, timestampSeconds: attemptedAt.getTime() / 1000, body, signingKey: registration.signingKey });
  const started = performance.now();
  const result = await postWebhook(registration.url, body, { ...headers }, { allowed: addressPolicy(getConfig().mode) });
  const durationMs = Math.round(performance.now() - started);
  const outcome = classifyAttempt(result);
  const now = new Date();

  let disable = outcome === 'gone';
  if (outcome !== 'delivered' && registration.failingSince && now.getTime() - Date.parse(registration.failingSince) >= FAILING_DISABLE_AFTER_MS) disable = true;
  const delay = outcome === 'retry' && !job.redelivery && !disable ? retryDelayMs(job.attempt) : undefined;
  const nextRetryAt = delay === undefined ? null : new Date(now.getTime() + delay);

  if (nextRetryAt) {
    const next: WebhookDeliveryJob = { ...job, attempt: job.attempt + 1, notBefore: nextRetryAt.getTime() };
    await enqueueWebhookDeliveries([next], { delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.floor(delay! / 1000)) });
  } else if (outcome === 'retry' && !job.redelivery && !disable) {
    await sendWebhookDeadLetter(job);
  }
  await recordDeliveryAttempt({
    id: timeOrderedId(attemptedAt.getTime()),
    registrationId: registration.id,
    eventId: job.event.id,
    eventType: job.event.type,
    attemptedAt: attemptedAt.toISOString(),
    statusCode: 'statusCode' in result ? result.statusCode : null,
    error: 'error' in result ? result.error : null,
    durationMs,
    nextRetryAt: nextRetryAt?.toISOString() ?? null,
    event: job.event,
    attempt: job.attempt,
  });
  if (disable) {
    await updateWebhookRegistration(registration.id, { enabled: false }, now.toISOString());
    logger.warn('webhook registration disabled', { registrationId: registration.id, reason: outcome === 'gone' ? '410' : 'failing for 5 days' });
  } else if (outcome === 'delivered') {
    if (registration.failingSince) await clearWebhookFailing(registration.id);
  } else if (!registration.failingSince) {
    await markWebhookFailing(registration.id, now.toISOString());
  }
  await crashIfArmed(registration.id);
}

/** Local tests only: the `kill-delivery-worker` fault kills the whole batch after this attempt. */
async function crashIfArmed(registrationId: string): Promise<void> {
  try {
    await failIfArmed('kill-delivery-worker', registrationId);
  } catch (error) {
    if (error instanceof InjectedFault) throw new WorkerCrash(error.message);
    throw error;
  }
}

export const deliverWebhookJob = defineJob({
  schema: JobSchema,
  run: async (job) => deliverWebhook(job as WebhookDeliveryJob),
});
