import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import type { WebhookTestEvent } from '../db/events.js';
import type { Page } from '../db/paging.js';
import { getDeliveryAttempt, listDeliveryAttempts, type DeliveryAttemptRecord } from '../db/webhook-deliveries.js';
import type { WebhookRegistrationRecord } from '../db/webhooks.js';
import { enqueueWebhookDeliveries, type WebhookDeliveryJob } from '../events/jobs.js';
import { ConflictError, NotFoundError } from '../http/errors.js';
import { loadWebhookRegistration, receivesEvent } from './webhook-registrations.js';

/** An entry of `GET /webhook-registrations/:id/deliveries` (DESIGN.md "Webhook deliveries"). */
export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: DeliveryAttemptRecord['eventType'];
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  nextRetryAt: string | null;
}

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
export function webhookTestEvent(registration: Pick<WebhookRegistrationRecord, 'workspaceId'>, userId: string, at = new Date()): WebhookTestEvent {
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
    throw new ConflictError(`Webhook registration ${registration.id} is disabled: enable it (POST /webhook-registrations/${registration.id} with enabled: true) to ${action}.`, 'webhook-registration-disabled');
  }
}

/** One page of a registration's delivery log, newest first; the registration is loaded (404/403) as its own routes do. */
export async function listWebhookDeliveries(principal: Principal, registrationId: string, page: { limit: number; before?: string }): Promise<Page<DeliveryAttemptRecord>> {
  await loadWebhookRegistration(principal, registrationId);
  return listDeliveryAttempts(registrationId, page);
}

/**
 * Queues one more attempt of a log entry's message. 404 when the entry is unknown or belongs to
 * another registration (it is looked up under this registration's partition); 409 when disabled.
 */
export async function redeliverWebhookDelivery(principal: Principal, registrationId: string, deliveryId: string): Promise<DeliveryAttemptRecord> {
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
