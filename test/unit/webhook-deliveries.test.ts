import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import type { EventRecord } from '../../shared/db/events.js';
import { timeOrderedId } from '../../shared/db/core/ids.js';
import type { DeliveryAttemptRecord } from '../../shared/db/webhook-deliveries.js';
import { redeliveryJob, toPublicWebhookDelivery, webhookTestEvent, webhookTestJob } from '../../shared/domain/webhooks/deliveries.js';
import { buildOpenApi, EXTENSION_FIELD } from '../../shared/http/openapi.js';

const event: EventRecord = {
  id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  type: 'comment_created',
  workspaceId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  markupId: '16fd2706-8baf-433b-82eb-8c7fada847da',
  threadId: '886313e1-3b8a-5372-9b90-0c9aee199e5d',
  userId: 'a8098c1a-f86e-11da-bd1a-00112444be1e',
  createdAt: '2026-11-24T12:00:00.000Z',
};
const entry: DeliveryAttemptRecord = {
  id: timeOrderedId(),
  registrationId: '6ba7b810-9dad-41d1-80b4-00c04fd430c8',
  eventId: event.id,
  eventType: event.type,
  attemptedAt: '2026-11-24T12:00:01.000Z',
  statusCode: 500,
  error: null,
  durationMs: 12,
  nextRetryAt: '2026-11-24T12:00:06.000Z',
  event,
  attempt: 3,
};

describe('delivery log jobs (issue 12 item 5)', () => {
  it('shows exactly the public fields of an attempt', () => {
    expect(toPublicWebhookDelivery(entry)).toEqual({
      id: entry.id,
      eventId: event.id,
      eventType: 'comment_created',
      attemptedAt: entry.attemptedAt,
      statusCode: 500,
      error: null,
      durationMs: 12,
      nextRetryAt: entry.nextRetryAt,
    });
  });

  it('redelivers the entry own event and attempt (same webhook-id and body), once', () => {
    expect(redeliveryJob(entry)).toEqual({
      type: 'deliver-webhook',
      registrationId: entry.registrationId,
      event,
      attempt: 3,
      redelivery: true,
    });
  });

  it('builds a webhook.test event of the registration workspace, caused by the caller, as a first attempt', () => {
    const at = new Date('2026-11-24T12:30:00.000Z');
    const test = webhookTestEvent({ workspaceId: event.workspaceId }, event.userId!, at);

    expect(test).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'webhook.test',
      workspaceId: event.workspaceId,
      userId: event.userId,
      createdAt: at.toISOString(),
    });
    expect(webhookTestEvent({ workspaceId: event.workspaceId }, event.userId!, at).id).not.toBe(test.id);
    expect(webhookTestJob(entry.registrationId, test)).toEqual({
      type: 'deliver-webhook',
      registrationId: entry.registrationId,
      event: test,
      attempt: 1,
    });
  });
});

describe('OpenAPI extensions (issue 12 item 5)', () => {
  const document = buildOpenApi(allRoutes()) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
  );

  it('marks exactly the operations beyond the anchors, with the vendor field and a sentence', () => {
    const marked = operations.filter(({ op }) => op[EXTENSION_FIELD] !== undefined);

    expect(marked.map(({ key }) => key).sort()).toEqual([
      // Issue 17: one message with its ETag, which no read of the anchors answers.
      'GET /api/v2/auth/session',
      'GET /api/v2/markups/{id}/events',
      'GET /api/v2/messages/{id}',
      'GET /api/v2/webhook-registrations/{id}/deliveries',
      // Issue 30: sign-in to the review app by email link (DESIGN.md "The review app").
      'POST /api/v2/auth/email-sign-in',
      'POST /api/v2/auth/email-sign-in/verify',
      'POST /api/v2/auth/sign-out',
      // Issue 32: the per-markup event log (above) and live-update tickets (DESIGN.md "Live updates").
      'POST /api/v2/live/tickets',
      'POST /api/v2/webhook-registrations/{id}/deliveries/{deliveryId}/redeliver',
      'POST /api/v2/webhook-registrations/{id}/test',
    ]);
    for (const { op } of marked) {
      expect(op[EXTENSION_FIELD]).toBe(true);
      expect(op.description).toContain('Extension:');
    }
    expect(operations.filter(({ op }) => String(op.description ?? '').includes('Extension:')).length).toBe(marked.length);
  });
});
