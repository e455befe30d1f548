import { randomUUID } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import type { Principal } from '../../auth/principal.js';
import { eventsOfItem, type DeliverableEvent, type EventRecord, type WebhookTestEvent } from '../../db/events.js';
import { failIfArmed, InjectedFault } from '../../db/core/faults.js';
import type { Page } from '../../db/core/paging.js';
import { nextTime } from '../../db/core/transact.js';
import {
  claimContinuation,
  clearNextRetry,
  getDeliveryAttempt,
  listDeliveryAttempts,
  markContinuationQueued,
  recordDeliveryAttempt,
  type DeliveryAttemptRecord,
} from '../../db/webhook-deliveries.js';
import { timeOrderedId } from '../../db/core/ids.js';
import {
  allWorkspaceWebhookRegistrations,
  clearWebhookFailing,
  getWebhookRegistration,
  markWebhookFailing,
  updateWebhookRegistration as writeWebhookRegistration,
  type WebhookRegistrationRecord,
} from '../../db/webhooks.js';
import { enqueueWebhookDeliveries, MAX_DELAY_SECONDS, sendWebhookDeadLetter, type WebhookDeliveryJob } from '../../events/jobs.js';
import { WorkerCrash } from '../../events/queue-worker.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { logger } from '../../logger.js';
import { recordMetrics } from '../../metrics.js';
import { eventBody } from './events.js';
import { loadWebhookRegistration, receivesEvent } from './registrations.js';
import { classifyAttempt, FAILING_DISABLE_AFTER_MS, retryDelayMs, type AttemptResult } from './retries.js';
import { signWebhook } from './signature.js';
import type { WebhookDeliveryView } from '../../schemas/webhooks.js';

/** An entry of `GET /webhook-registrations/:id/deliveries` (`WebhookDeliverySchema`). */
export type WebhookDelivery = WebhookDeliveryView;

/** The public shape: exactly these fields; the stored event, attempt number and registration stay private. */
export function toPublicWebhookDelivery(record: DeliveryAttemptRecord): WebhookDelivery {
  return {
    id: record.id,
    eventId: record.eventId,
    eventType: record.eventType,
    attemptedAt: record.attemptedAt,
    statusCode: record.statusCode,
    error: record.error,
    durationMs: record.durationMs,
    nextRetryAt: record.nextRetryAt,
  };
}

/**
 * The job of a redelivery: the entry's own event and attempt number, so the worker sends the same
 * `webhook-id` and body, and `redelivery` so it makes exactly one attempt and schedules no retry.
 */
export function redeliveryJob(entry: DeliveryAttemptRecord): WebhookDeliveryJob {
  return { type: 'deliver-webhook', registrationId: entry.registrationId, event: entry.event, attempt: entry.attempt, redelivery: true };
}

/** The `webhook.test` event of a registration, caused by `userId`: a new event id each call, never in the outbox. */
export function webhookTestEvent(
  registration: Pick<WebhookRegistrationRecord, 'workspaceId'>,
  userId: string,
  at = new Date(),
): WebhookTestEvent {
  return { id: randomUUID(), type: 'webhook.test', workspaceId: registration.workspaceId, userId, createdAt: at.toISOString() };
}

/** The first attempt of a test event, retried on the schedule like any event. */
export function webhookTestJob(registrationId: string, event: WebhookTestEvent): WebhookDeliveryJob {
  return { type: 'deliver-webhook', registrationId, event, attempt: 1 };
}

// Deliveries to a disabled registration are never made (DESIGN.md), so asking for one is a conflict
// the caller can fix (enable it), not a 202 for an attempt the worker would drop.
function requireEnabled(registration: WebhookRegistrationRecord, action: string): void {
  if (!registration.enabled) {
    throw new ConflictError(
      `Webhook registration ${registration.id} is disabled: enable it (POST /webhook-registrations/${registration.id} with enabled: true) to ${action}.`,
      'webhook-registration-disabled',
    );
  }
}

/** One page of a registration's delivery log, newest first; the registration is loaded (404/403) as its own routes do. */
export async function listWebhookDeliveries(
  principal: Principal,
  registrationId: string,
  page: { limit: number; before?: string },
): Promise<Page<DeliveryAttemptRecord>> {
  await loadWebhookRegistration(principal, registrationId);
  return listDeliveryAttempts(registrationId, page);
}

/**
 * Queues one more attempt of a log entry's message. 404 when the entry is unknown or belongs to
 * another registration (it is looked up under this registration's partition); 409 when disabled.
 */
export async function redeliverWebhookDelivery(
  principal: Principal,
  registrationId: string,
  deliveryId: string,
): Promise<DeliveryAttemptRecord> {
  const registration = await loadWebhookRegistration(principal, registrationId);
  const entry = await getDeliveryAttempt(registrationId, deliveryId);
  if (!entry) throw new NotFoundError(`Delivery ${deliveryId} of webhook registration ${registrationId} does not exist.`);
  requireEnabled(registration, 'redeliver');
  if (!receivesEvent(registration, entry.event, { redelivery: true })) {
    throw new ConflictError(
      `Webhook registration ${registration.id} no longer receives ${entry.eventType} events: add the type to its eventTypes to redeliver this one.`,
      'webhook-event-type-not-subscribed',
    );
  }
  await enqueueWebhookDeliveries([redeliveryJob(entry)]);
  return entry;
}

/** Queues a signed `webhook.test` event to the registration, caused by the caller; 409 when disabled. */
export async function sendWebhookTest(principal: Principal, registrationId: string): Promise<WebhookTestEvent> {
  const registration = await loadWebhookRegistration(principal, registrationId);
  requireEnabled(registration, 'send a test event');
  const event = webhookTestEvent(registration, principal.userId);
  await enqueueWebhookDeliveries([webhookTestJob(registration.id, event)]);
  return event;
}

// ---------------------------------------------------------------------------------------------
// webhook-fanout: the outbox's events become first-attempt jobs
// ---------------------------------------------------------------------------------------------

/** The first-attempt jobs of one outbox item: one per (event, receiving registration). */
export function deliveryJobs(events: readonly EventRecord[], registrations: readonly WebhookRegistrationRecord[]): WebhookDeliveryJob[] {
  return events.flatMap((event) =>
    registrations
      .filter((registration) => receivesEvent(registration, event))
      .map((registration) => ({ type: 'deliver-webhook' as const, registrationId: registration.id, event, attempt: 1 })),
  );
}

/** Reads each workspace's registrations once for as long as the reader lives (one stream batch). */
export type RegistrationsReader = (workspaceId: string) => Promise<WebhookRegistrationRecord[]>;

export function registrationsReader(): RegistrationsReader {
  const byWorkspace = new Map<string, Promise<WebhookRegistrationRecord[]>>();
  return (workspaceId) => {
    let found = byWorkspace.get(workspaceId);
    if (!found) byWorkspace.set(workspaceId, (found = allWorkspaceWebhookRegistrations(workspaceId)));
    return found;
  };
}

/**
 * Queues the first attempts of the events an outbox item (the stream's new image) holds, for every
 * registration of their workspace that receives them. A failure part-way may leave some queued: the
 * stream retries the item, and receivers deduplicate the repeated `webhook-id`.
 */
export async function fanOutOutboxItem(item: Record<string, unknown>, registrationsOf: RegistrationsReader): Promise<void> {
  const events = eventsOfItem(item);
  const workspaceId = events[0]?.workspaceId;
  if (!workspaceId) return;
  const jobs = deliveryJobs(events, await registrationsOf(workspaceId));
  // One SendMessageBatch at a time, so a local test can fail the record after part of its jobs are queued.
  for (let i = 0; i < jobs.length; i += 10) {
    if (i > 0) await failIfArmed('fanout-between-batches', workspaceId);
    await enqueueWebhookDeliveries(jobs.slice(i, i + 10));
  }
}

// ---------------------------------------------------------------------------------------------
// webhook-delivery: one attempt of one delivery
// ---------------------------------------------------------------------------------------------

/** A job due within this much is attempted now rather than put back. */
const EARLY_TOLERANCE_MS = 1_000;

/** Sends one attempt: the worker's HTTP client, which answers the status or why none came. */
export type PostWebhook = (url: string, body: string, headers: Record<string, string>) => Promise<AttemptResult>;

/**
 * One attempt of one delivery (DESIGN.md "Webhook deliveries"). A job not yet due goes back on the
 * queue for the rest of its wait (SQS delays at most 15 minutes, retries wait up to 10 hours). The
 * attempt is signed with the registration's key of this moment and logged; then 2xx clears the
 * failing mark, 410 disables, 5xx/429/no answer schedules the next attempt (after the last: the
 * dead-letter queue), any other status ends the delivery; a redelivery is never retried. What
 * follows an attempt is claimed first (`claimContinuation`, by this queue message), so a duplicate
 * message or a repeated attempt never forks the chain of retries.
 */
export async function attemptWebhookDelivery(job: WebhookDeliveryJob, messageId: string, post: PostWebhook): Promise<void> {
  const registration = await getWebhookRegistration(job.registrationId);
  if (!registration || !receivesEvent(registration, job.event, { redelivery: job.redelivery })) {
    logger.info('webhook delivery dropped', {
      registrationId: job.registrationId,
      eventId: job.event.id,
      registration: registration ? 'not accepting' : 'gone',
    });
    // The log said when this retry was due: it now says none is coming.
    if (job.previousAttemptId) await clearNextRetry(job.registrationId, job.previousAttemptId);
    return;
  }
  const waitMs = (job.notBefore ?? 0) - Date.now();
  if (waitMs > EARLY_TOLERANCE_MS) {
    await enqueueWebhookDeliveries([job], { delaySeconds: Math.min(MAX_DELAY_SECONDS, waitMs / 1000) });
    return;
  }
  // Never before the `nextRetryAt` the log announced: a message a little early waits out the rest here.
  if (waitMs > 0) await setTimeout(waitMs);
  const attemptedAt = new Date();
  const started = performance.now();
  const body = await bodyOf(job.event);
  const result: AttemptResult =
    body === TOO_LARGE
      ? { error: 'body too large to store (over 400 KB deflated)' }
      : await post(registration.url, body, {
          ...signWebhook({ id: job.event.id, timestampSeconds: attemptedAt.getTime() / 1000, body, signingKey: registration.signingKey }),
        });
  const durationMs = Math.round(performance.now() - started);
  const outcome = body === TOO_LARGE ? 'failed' : classifyAttempt(result);
  const now = new Date();

  const failingFor = registration.failingSince ? now.getTime() - Date.parse(registration.failingSince) : 0;
  const disable = outcome === 'gone' || (outcome !== 'delivered' && failingFor >= FAILING_DISABLE_AFTER_MS);
  const delay = outcome === 'retry' && !job.redelivery && !disable ? retryDelayMs(job.attempt) : undefined;
  const nextRetryAt = delay === undefined ? null : new Date(now.getTime() + delay);
  // Given up: the schedule ran out, the 5-day rule disabled it, or the body cannot be sent; kept in the dead-letter queue.
  const deadLetter =
    !job.redelivery && delay === undefined && (outcome === 'retry' || body === TOO_LARGE || (disable && outcome !== 'gone'));

  const attemptId = timeOrderedId(attemptedAt.getTime());
  await recordDeliveryAttempt({
    id: attemptId,
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
      const next: WebhookDeliveryJob = { ...job, attempt: job.attempt + 1, notBefore: nextRetryAt.getTime(), previousAttemptId: attemptId };
      await enqueueWebhookDeliveries([next], { delaySeconds: Math.min(MAX_DELAY_SECONDS, delay! / 1000) });
    } else {
      await sendWebhookDeadLetter(job);
    }
    await markContinuationQueued(registration.id, job.event.id, job.attempt);
  }
  if (disable) {
    // Only the registration as read: a user who changed it meanwhile (a new URL, a re-enable) decides.
    const disabled = await writeWebhookRegistration(
      registration.id,
      { enabled: false },
      new Date(nextTime(Date.parse(registration.modifiedAt))).toISOString(),
      registration.modifiedAt,
    );
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
