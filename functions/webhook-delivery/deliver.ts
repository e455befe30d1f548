import * as v from 'valibot';
import { getConfig } from '../../shared/config.js';
import { failIfArmed, InjectedFault } from '../../shared/db/faults.js';
import type { DeliverableEvent } from '../../shared/db/events.js';
import { receivesEvent } from '../../shared/domain/webhook-registrations.js';
import { nextTime } from '../../shared/db/transact.js';
import { claimContinuation, markContinuationQueued, recordDeliveryAttempt, timeOrderedId } from '../../shared/db/webhook-deliveries.js';
import {
  clearWebhookFailing,
  getWebhookRegistration,
  markWebhookFailing,
  updateWebhookRegistration,
} from '../../shared/db/webhooks.js';
import { enqueueWebhookDeliveries, MAX_DELAY_SECONDS, sendWebhookDeadLetter, type WebhookDeliveryJob } from '../../shared/events/jobs.js';
import { defineJob, WorkerCrash } from '../../shared/events/queue-worker.js';
import { eventBody } from '../../shared/domain/webhook-events.js';
import { classifyAttempt, FAILING_DISABLE_AFTER_MS, retryDelayMs, type AttemptResult } from '../../shared/domain/webhook-retries.js';
import { signWebhook } from '../../shared/domain/webhook-signature.js';
import { logger } from '../../shared/logger.js';
import { recordMetrics } from '../../shared/metrics.js';
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

/**
 * One attempt of one delivery (DESIGN.md "Webhook deliveries"). A job not yet due goes back on the
 * queue for the rest of its wait (SQS delays at most 15 minutes, retries wait up to 10 hours). The
 * attempt is signed with the registration's key of this moment and logged; then 2xx clears the
 * failing mark, 410 disables, 5xx/429/no answer schedules the next attempt (after the last: the
 * dead-letter queue), any other status ends the delivery; a redelivery is never retried. What
 * follows an attempt is claimed first (`claimContinuation`, by this queue message), so a duplicate
 * message or a repeated attempt never forks the chain of retries.
 */
export async function deliverWebhook(job: WebhookDeliveryJob, messageId: string): Promise<void> {
  const waitMs = (job.notBefore ?? 0) - Date.now();
  if (waitMs > EARLY_TOLERANCE_MS) {
    await enqueueWebhookDeliveries([job], { delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.ceil(waitMs / 1000)) });
    return;
  }
  const registration = await getWebhookRegistration(job.registrationId);
  if (!registration || !receivesEvent(registration, job.event, { redelivery: job.redelivery })) {
    logger.info('webhook delivery dropped', { registrationId: job.registrationId, eventId: job.event.id, registration: registration ? 'not accepting' : 'gone' });
    return;
  }
  const attemptedAt = new Date();
  const started = performance.now();
  const body = await bodyOf(job.event);
  const result: AttemptResult =
    body === TOO_LARGE
      ? { error: 'body too large to store (over 400 KB deflated)' }
      : await postWebhook(
          registration.url,
          body,
          { ...signWebhook({ id: job.event.id, timestampSeconds: attemptedAt.getTime() / 1000, body, signingKey: registration.signingKey }) },
          { allowed: addressPolicy(getConfig().mode) },
        );
  const durationMs = Math.round(performance.now() - started);
  const outcome = body === TOO_LARGE ? 'failed' : classifyAttempt(result);
  const now = new Date();

  const failingFor = registration.failingSince ? now.getTime() - Date.parse(registration.failingSince) : 0;
  const disable = outcome === 'gone' || (outcome !== 'delivered' && failingFor >= FAILING_DISABLE_AFTER_MS);
  const delay = outcome === 'retry' && !job.redelivery && !disable ? retryDelayMs(job.attempt) : undefined;
  const nextRetryAt = delay === undefined ? null : new Date(now.getTime() + delay);
  // Given up: the schedule ran out, the 5-day rule disabled it, or the body cannot be sent; kept in the dead-letter queue.
  const deadLetter = !job.redelivery && delay === undefined && (outcome === 'retry' || body === TOO_LARGE || (disable && outcome !== 'gone'));

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
  recordMetrics({
    WebhookDeliverySucceeded: outcome === 'delivered' ? 1 : 0,
    WebhookDeliveryFailed: outcome === 'delivered' ? 0 : 1,
    WebhookDeliveryRetried: nextRetryAt ? 1 : 0,
    ...(outcome === 'delivered' ? { WebhookEventToDelivery: now.getTime() - Date.parse(job.event.createdAt) } : {}),
  });
  if ((nextRetryAt || deadLetter) && (await claimContinuation(registration.id, job.event.id, job.attempt, messageId))) {
    if (nextRetryAt) {
      const next: WebhookDeliveryJob = { ...job, attempt: job.attempt + 1, notBefore: nextRetryAt.getTime() };
      await enqueueWebhookDeliveries([next], { delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.floor(delay! / 1000)) });
    } else {
      await sendWebhookDeadLetter(job);
    }
    await markContinuationQueued(registration.id, job.event.id, job.attempt);
  }
  if (disable) {
    // Only the registration as read: a user who changed it meanwhile (a new URL, a re-enable) decides.
    const disabled = await updateWebhookRegistration(registration.id, { enabled: false }, new Date(nextTime(Date.parse(registration.modifiedAt))).toISOString(), registration.modifiedAt);
    logger.warn(disabled === 'stale' ? 'webhook registration changed meanwhile; not disabled' : 'webhook registration disabled', {
      registrationId: registration.id,
      reason: outcome === 'gone' ? '410' : 'failing for 5 days',
    });
  } else if (outcome === 'delivered') {
    if (registration.failingSince) await clearWebhookFailing(registration.id);
  } else if (!registration.failingSince) {
    await markWebhookFailing(registration.id, now.toISOString());
  }
  await crashIfArmed(registration.id);
}

const TOO_LARGE = Symbol('too large');

/** The event's stored body, or TOO_LARGE when even deflated it exceeds an item (it can never be sent the same on every attempt). */
async function bodyOf(event: DeliverableEvent): Promise<string | typeof TOO_LARGE> {
  try {
    return await eventBody(event);
  } catch (error) {
    if (error instanceof Error && error.name === 'ValidationException' && /size/i.test(error.message)) return TOO_LARGE;
    throw error;
  }
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
  run: async (job, record) => deliverWebhook(job as WebhookDeliveryJob, record.messageId),
});
