import { randomUUID } from 'node:crypto';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb, getSqs } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { listEvents, type DeliverableEvent } from '../../shared/db/events.js';
import { armFault } from '../../shared/db/core/faults.js';
import { listDeliveryAttempts, type DeliveryAttemptRecord } from '../../shared/db/webhook-deliveries.js';
import { getWebhookRegistration, webhookRegistrationKey } from '../../shared/db/webhooks.js';
import { enqueueWebhookDeliveries, type WebhookDeliveryJob } from '../../shared/events/jobs.js';
import { MAX_ATTEMPTS } from '../../shared/domain/webhooks/retries.js';
import { call, makeOrganization } from '../support/api.js';
import { eventually } from '../support/polling.js';
import { verifyWithStandardWebhooks, type ReceivedRequest, type WebhookReceiver } from '../support/webhook-receiver.js';
import { closeReceiversAfterEach, organizationWithSubscriber, subscribe } from '../support/webhook-pipeline.js';
import { createThread, makeTypedMarkup } from '../support/threads.js';
import { createWebhookRegistration } from '../support/webhooks.js';

closeReceiversAfterEach();

const setUp = organizationWithSubscriber;

const testEvent = (workspaceId: string): DeliverableEvent => ({
  id: randomUUID(),
  type: 'webhook.test',
  workspaceId,
  createdAt: new Date().toISOString(),
});
const markupEvent = (workspaceId: string): DeliverableEvent => ({
  id: randomUUID(),
  type: 'markup_created',
  workspaceId,
  markupId: randomUUID(),
  createdAt: new Date().toISOString(),
});
const job = (registrationId: string, event: DeliverableEvent, extra: Partial<WebhookDeliveryJob> = {}): WebhookDeliveryJob => ({
  type: 'deliver-webhook',
  registrationId,
  event,
  attempt: 1,
  ...extra,
});

const received = (receiver: WebhookReceiver, count: number, timeoutMs = 10_000) =>
  eventually(
    async () => [...receiver.requests],
    (requests) => requests.length >= count,
    timeoutMs,
  );
const deliveryLog = (registrationId: string, done: (entries: DeliveryAttemptRecord[]) => boolean, timeoutMs = 10_000) =>
  eventually(async () => (await listDeliveryAttempts(registrationId, { limit: 50 })).items, done, timeoutMs);

describe('webhook delivery worker', () => {
  it('POSTs a signed event the standardwebhooks package verifies, and logs the attempt', async () => {
    const { org, receiver, registration } = await setUp();
    const event = testEvent(org.workspaceId);
    await enqueueWebhookDeliveries([job(registration.id, event)]);

    const [request] = await received(receiver, 1);
    expect(request?.method).toBe('POST');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-id']).toBe(event.id);
    expect(verifyWithStandardWebhooks(registration.signingKey, request!)).toMatchObject({ id: event.id, type: 'webhook.test' });
    const log = await deliveryLog(registration.id, (entries) => entries.length >= 1);
    expect(log).toEqual([
      expect.objectContaining({
        eventId: event.id,
        eventType: 'webhook.test',
        statusCode: 200,
        error: null,
        nextRetryAt: null,
        attempt: 1,
      }),
    ]);
  });

  it('retries a 500 within 10 s with the same webhook-id, both signed; failingSince is set, then cleared by the success', async () => {
    const { org, receiver, registration } = await setUp();
    receiver.script({ status: 500 });
    const event = testEvent(org.workspaceId);
    await enqueueWebhookDeliveries([job(registration.id, event)]);

    const [first] = await received(receiver, 1);
    expect(
      (
        await eventually(
          () => getWebhookRegistration(registration.id),
          (r) => r?.failingSince !== undefined,
        )
      )?.failingSince,
    ).toBeDefined();
    const requests = await received(receiver, 2, 12_000);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.at - first!.at).toBeLessThan(10_000);
    expect(requests.map((request) => request.headers['webhook-id'])).toEqual([event.id, event.id]);
    expect(requests[1]!.body).toBe(first!.body);
    for (const request of requests) verifyWithStandardWebhooks(registration.signingKey, request);

    const log = await deliveryLog(registration.id, (entries) => entries.length >= 2);
    const [retry, initial] = log;
    expect(initial).toMatchObject({ statusCode: 500, attempt: 1 });
    expect(Date.parse(initial!.nextRetryAt!) - Date.parse(initial!.attemptedAt)).toBeGreaterThanOrEqual(4_000);
    expect(retry).toMatchObject({ statusCode: 200, attempt: 2, nextRetryAt: null });
    expect(
      (
        await eventually(
          () => getWebhookRegistration(registration.id),
          (r) => r?.failingSince === undefined,
        )
      )?.failingSince,
    ).toBeUndefined();
    const shown = await call('GET', `/webhook-registrations/${registration.id}`, { key: org.workspaceKey });
    expect(Object.keys(shown.body.data)).not.toContain('failingSince');
  });

  it('attempts each retry no earlier than the nextRetryAt its failed attempt logged (6 deliveries)', async () => {
    const { org, receiver, registration } = await setUp();
    const events = Array.from({ length: 6 }, () => testEvent(org.workspaceId));
    receiver.script(...events.map(() => ({ status: 500 })));
    await enqueueWebhookDeliveries(events.map((event) => job(registration.id, event)));

    const log = await deliveryLog(registration.id, (entries) => entries.length >= 12, 20_000);
    for (const event of events) {
      const [retry, initial] = log.filter((entry) => entry.eventId === event.id);
      expect(initial).toMatchObject({ statusCode: 500, attempt: 1 });
      expect(retry).toMatchObject({ statusCode: 200, attempt: 2, nextRetryAt: null });
      expect(Date.parse(retry!.attemptedAt), `retry of ${event.id}`).toBeGreaterThanOrEqual(Date.parse(initial!.nextRetryAt!));
    }
  });

  it('says no retry is coming once the retry it announced is dropped (registration disabled meanwhile)', async () => {
    const { org, receiver, registration } = await setUp();
    receiver.script({ status: 500 });
    await enqueueWebhookDeliveries([job(registration.id, testEvent(org.workspaceId))]);
    const [failed] = await deliveryLog(registration.id, (entries) => entries.length >= 1);
    expect(failed!.nextRetryAt).not.toBeNull();
    const disabled = await call('POST', `/webhook-registrations/${registration.id}`, {
      key: org.workspaceKey,
      body: { url: receiver.url, enabled: false },
    });
    expect(disabled.status).toBe(200);

    const [entry, ...others] = await deliveryLog(registration.id, (entries) => entries[0]?.nextRetryAt === null, 20_000);
    expect(entry).toMatchObject({ id: failed!.id, statusCode: 500, nextRetryAt: null });
    expect(others).toEqual([]);
    expect(receiver.requests).toHaveLength(1);
  });

  it('disables the registration on 410, without retrying', async () => {
    const { org, receiver, registration } = await setUp();
    receiver.script({ status: 410 });
    await enqueueWebhookDeliveries([job(registration.id, testEvent(org.workspaceId))]);

    const log = await deliveryLog(registration.id, (entries) => entries.length >= 1);
    expect(log[0]).toMatchObject({ statusCode: 410, nextRetryAt: null });
    const shown = await eventually(
      () => call('GET', `/webhook-registrations/${registration.id}`, { key: org.workspaceKey }),
      (response) => response.body.data?.enabled === false,
    );
    expect(shown.body.data.enabled).toBe(false);
  });

  it('delivers to one registration while another registration hangs in the same batch', async () => {
    const slow = await setUp();
    const fast = await setUp();
    slow.receiver.script({ hang: true });
    const sent = Date.now();
    await enqueueWebhookDeliveries([
      job(slow.registration.id, testEvent(slow.org.workspaceId)),
      job(fast.registration.id, testEvent(fast.org.workspaceId)),
    ]);

    await received(slow.receiver, 1);
    const [request] = await received(fast.receiver, 1);
    expect(request).toBeDefined();
    expect(request!.at - sent).toBeLessThan(3_000);
  });

  it('signs the retry with the refreshed key only', async () => {
    const { org, receiver, registration } = await setUp();
    receiver.script({ status: 503 });
    await enqueueWebhookDeliveries([job(registration.id, testEvent(org.workspaceId))]);
    const [first] = await received(receiver, 1);
    verifyWithStandardWebhooks(registration.signingKey, first!);
    const refreshed = await call('POST', `/webhook-registrations/${registration.id}/refresh-signing-key`, { key: org.workspaceKey });
    expect(refreshed.status).toBe(200);
    const newKey = refreshed.body.data.signingKey as string;

    const requests = await received(receiver, 2, 12_000);
    expect(requests).toHaveLength(2);
    expect(verifyWithStandardWebhooks(newKey, requests[1]!)).toBeDefined();
    expect(() => verifyWithStandardWebhooks(registration.signingKey, requests[1]!)).toThrow();
  });

  it('sends nothing to a disabled registration or one not subscribed to the type', async () => {
    const { org, receiver, registration } = await setUp({ enabled: false });
    const other = await createWebhookRegistration(org.workspaceKey, { url: receiver.url, eventTypes: ['comment_created'] });
    const dropped = [job(registration.id, markupEvent(org.workspaceId)), job(other.id, markupEvent(org.workspaceId))];
    await enqueueWebhookDeliveries(dropped);
    // A later message to the same receiver: once it has arrived, the earlier ones were taken and dropped.
    const marker = testEvent(org.workspaceId);
    await enqueueWebhookDeliveries([job(other.id, marker)]);

    const requests = await received(receiver, 1);
    await deliveryLog(other.id, (entries) => entries.length >= 1);
    expect(requests.map((request) => request.headers['webhook-id'])).toEqual([marker.id]);
    expect((await listDeliveryAttempts(registration.id, { limit: 10 })).items).toEqual([]);
  });

  it('gives a redelivery exactly one attempt', async () => {
    const { org, receiver, registration } = await setUp();
    receiver.script({ status: 500 });
    await enqueueWebhookDeliveries([job(registration.id, testEvent(org.workspaceId), { redelivery: true })]);
    const log = await deliveryLog(registration.id, (entries) => entries.length >= 1);
    expect(log[0]).toMatchObject({ statusCode: 500, nextRetryAt: null });
  });

  it('puts a delivery whose last attempt failed on the dead-letter queue', async () => {
    const { org, receiver, registration } = await setUp();
    receiver.script({ status: 500 });
    const event = testEvent(org.workspaceId);
    await enqueueWebhookDeliveries([job(registration.id, event, { attempt: MAX_ATTEMPTS })]);
    const log = await deliveryLog(registration.id, (entries) => entries.length >= 1);
    expect(log[0]).toMatchObject({ statusCode: 500, nextRetryAt: null, attempt: MAX_ATTEMPTS });
    const dead = await eventually(
      async () => {
        const result = await getSqs().send(
          new ReceiveMessageCommand({ QueueUrl: getConfig().webhookDeadLetterQueueUrl, MaxNumberOfMessages: 10 }),
        );
        return (result.Messages ?? []).map((message) => JSON.parse(message.Body!) as WebhookDeliveryJob);
      },
      (jobs) => jobs.some((entry) => entry.event.id === event.id),
    );
    expect(dead.find((entry) => entry.event.id === event.id)).toMatchObject({ registrationId: registration.id, attempt: MAX_ATTEMPTS });
  });

  it('disables a registration whose attempts have failed for 5 days', async () => {
    const { org, receiver, registration } = await setUp();
    receiver.script({ status: 500 });
    const sixDaysAgo = new Date(Date.now() - 6 * 24 * 3_600_000).toISOString();
    await getDb().send(
      new UpdateCommand({
        TableName: getConfig().tableName,
        Key: webhookRegistrationKey(registration.id),
        UpdateExpression: 'SET failingSince = :at',
        ExpressionAttributeValues: { ':at': sixDaysAgo },
      }),
    );
    await enqueueWebhookDeliveries([job(registration.id, testEvent(org.workspaceId))]);

    const log = await deliveryLog(registration.id, (entries) => entries.length >= 1);
    expect(log[0]).toMatchObject({ statusCode: 500, nextRetryAt: null });
    const shown = await eventually(
      () => call('GET', `/webhook-registrations/${registration.id}`, { key: org.workspaceKey }),
      (response) => response.body.data?.enabled === false,
    );
    expect(shown.body.data.enabled).toBe(false);
  });
});

/** The receiver's requests grouped by webhook-id, after checking that every repeat of an id carries the same body. */
function byWebhookId(requests: readonly ReceivedRequest[]): Map<string, ReceivedRequest[]> {
  const groups = new Map<string, ReceivedRequest[]>();
  for (const request of requests) {
    const id = String(request.headers['webhook-id']);
    groups.set(id, [...(groups.get(id) ?? []), request]);
  }
  for (const group of groups.values()) expect(new Set(group.map((request) => request.body)).size).toBe(1);
  return groups;
}

describe('webhook faults through the whole pipeline (operation, outbox, stream, fan-out, queue, worker)', () => {
  it(
    'redelivers after the worker died mid-batch: repeats keep their webhook-id, no new id, no extra event',
    { timeout: 200_000 },
    async () => {
      const { org, receiver, registration } = await setUp();
      const markup = await makeTypedMarkup(org, 'webpage');
      await armFault('kill-delivery-worker', registration.id);
      for (let i = 0; i < 3; i++) await createThread(org.workspaceKey, markup);

      // The crashed batch is not deleted: its messages reappear after the visibility timeout (120 s).
      const emitted = await eventually(
        () => listEvents(org.workspaceId),
        (events) => events.length >= 3,
      );
      const done = (requests: ReceivedRequest[]) =>
        new Set(requests.map((request) => request.headers['webhook-id'])).size >= 3 && requests.length > 3;
      const requests = await eventually(async () => [...receiver.requests], done, 180_000);

      expect(emitted).toHaveLength(3);
      expect(new Set(byWebhookId(requests).keys())).toEqual(new Set(emitted.map((event) => event.id)));
      for (const request of requests) verifyWithStandardWebhooks(registration.signingKey, request);
      expect(await listEvents(org.workspaceId)).toEqual(emitted);
    },
  );

  it('repeats, never re-emits, when the fan-out fails after queuing part of a record: the pump retries the record', async () => {
    const org = await makeOrganization();
    // Eleven registrations: the record's jobs take two SendMessageBatch calls, and the fault fires between them.
    const { receiver, registration: first } = await subscribe(org.workspaceKey);
    const registrations = [
      first,
      ...(await Promise.all(Array.from({ length: 10 }, () => createWebhookRegistration(org.workspaceKey, { url: receiver.url })))),
    ];
    const markup = await makeTypedMarkup(org, 'webpage');
    await armFault('fanout-between-batches', org.workspaceId);
    await createThread(org.workspaceKey, markup);

    // The first ten are queued twice (before the fault and on the retry), the eleventh once.
    // Twenty-one deliveries through the stream pump, the fan-out's retry and the queue: generous on a loaded machine.
    const requests = await received(receiver, 21, 60_000);
    const [event, ...others] = await listEvents(org.workspaceId);
    expect(others).toEqual([]);
    expect([...byWebhookId(requests).keys()]).toEqual([event!.id]);
    const perRegistration = registrations.map(
      (registration) => requests.filter((request) => verifies(registration.signingKey, request)).length,
    );
    expect(perRegistration.every((count) => count >= 1)).toBe(true);
    expect(perRegistration.reduce((sum, count) => sum + count)).toBe(requests.length);
    expect(perRegistration.filter((count) => count === 2)).toHaveLength(10);
  }, 90_000);
});

const verifies = (signingKey: string, request: ReceivedRequest) => {
  try {
    verifyWithStandardWebhooks(signingKey, request);
    return true;
  } catch {
    return false;
  }
};
