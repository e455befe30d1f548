import { randomUUID } from 'node:crypto';
import type { EventRecord } from '../../shared/db/events.js';
import { timeOrderedId } from '../../shared/db/core/ids.js';
import { recordDeliveryAttempt, type DeliveryAttemptRecord } from '../../shared/db/webhook-deliveries.js';

/**
 * Writes a delivery-log entry of `registrationId` as the delivery worker would (a failed first
 * attempt of a fresh `markup_created` event unless `overrides` say otherwise), attempted at `at`.
 */
export async function recordAttempt(
  registration: { id: string; workspaceId: string },
  at: number = Date.now(),
  overrides: Partial<DeliveryAttemptRecord> = {},
): Promise<DeliveryAttemptRecord> {
  const event: EventRecord = {
    id: randomUUID(),
    type: 'markup_created',
    workspaceId: registration.workspaceId,
    markupId: randomUUID(),
    createdAt: new Date(at - 50).toISOString(),
  };
  const record: DeliveryAttemptRecord = {
    id: timeOrderedId(at),
    registrationId: registration.id,
    eventId: event.id,
    eventType: event.type,
    attemptedAt: new Date(at).toISOString(),
    statusCode: 500,
    error: null,
    durationMs: 42,
    nextRetryAt: new Date(at + 5000).toISOString(),
    event,
    attempt: 1,
    ...overrides,
  };
  await recordDeliveryAttempt(record);
  return record;
}
