import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { deliverWebhook } from '../../functions/webhook-delivery/deliver.js';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import type { DeliverableEvent } from '../../shared/db/events.js';
import { getWebhookRegistration, updateWebhookRegistration, webhookRegistrationKey } from '../../shared/db/webhooks.js';
import { MAX_WEBHOOK_REGISTRATIONS } from '../../shared/domain/webhooks/registrations.js';
import { enqueueWebhookDeliveries, type WebhookDeliveryJob } from '../../shared/events/jobs.js';
import { call, makeOrganization } from '../support/api.js';
import { eventually } from '../support/polling.js';
import { expectProblem } from '../support/problems.js';
import type { WebhookReceiver } from '../support/webhook-receiver.js';
import { closeReceiversAfterEach, organizationWithSubscriber } from '../support/webhook-pipeline.js';
import { LOOPBACK_HOOK_URL } from '../support/webhooks.js';

/** Rules of DESIGN.md "Webhook deliveries" that a review found unguarded, each with its race or edge. */

function expectConflict(response: Awaited<ReturnType<typeof call>>, slug: string): void {
  expectProblem(response, 409);
  expect((response.body as { type: string }).type).toBe(`urn:review-board:problem:${slug}`);
}

closeReceiversAfterEach();

const setUp = organizationWithSubscriber;

const markupEvent = (workspaceId: string, createdAt = new Date()): DeliverableEvent => ({
  id: randomUUID(),
  type: 'markup_created',
  workspaceId,
  markupId: randomUUID(),
  createdAt: createdAt.toISOString(),
});
const job = (registrationId: string, event: DeliverableEvent): WebhookDeliveryJob => ({
  type: 'deliver-webhook',
  registrationId,
  event,
  attempt: 1,
});

/**
 * Waits for `atLeast` requests, then for the rest of the window in which a forked second retry
 * chain would show itself (its first retry leaves 4-6 s after its attempt, like the first chain's):
 * an absence can only be shown over a window.
 */
async function requestsAfterRetryWindow(receiver: WebhookReceiver, atLeast: number): Promise<number> {
  await eventually(
    async () => receiver.requests.length,
    (count) => count >= atLeast,
    30_000,
  );
  const windowEnds = receiver.requests[0]!.at + 9_000;
  await eventually(
    async () => Date.now(),
    (now) => now >= windowEnds,
    15_000,
  );
  return receiver.requests.length;
}

describe('webhook delivery rules', () => {
  it('never delivers an event of a disabled period, even when its job reaches the worker after a re-enable', async () => {
    const { org, receiver, registration } = await setUp();
    await call('POST', `/webhook-registrations/${registration.id}`, { key: org.workspaceKey, body: { url: receiver.url, enabled: false } });
    const duringOutage = markupEvent(org.workspaceId);
    await call('POST', `/webhook-registrations/${registration.id}`, { key: org.workspaceKey, body: { url: receiver.url, enabled: true } });
    const afterwards = markupEvent(org.workspaceId);
    // The fan-out was late (a queue outage): both jobs reach the worker after the re-enable.
    await enqueueWebhookDeliveries([job(registration.id, duringOutage), job(registration.id, afterwards)]);

    await eventually(
      async () => receiver.requests.length,
      (count) => count >= 1,
      30_000,
    );
    await eventually(
      async () => receiver.requests.map((request) => request.headers['webhook-id']),
      (ids) => ids.includes(afterwards.id),
      30_000,
    );
    expect(receiver.requests.map((request) => request.headers['webhook-id'])).not.toContain(duringOutage.id);
  }, 90_000);

  it('continues a failed attempt once: the same message processed again, or a duplicate message, queues no second retry chain', async () => {
    const { org, receiver, registration } = await setUp();
    const event = markupEvent(org.workspaceId);
    receiver.script({ status: 500 }, { status: 500 }, { status: 500 });
    // A processing that died after queuing its retry and is redelivered (same message id), then a duplicate message.
    await deliverWebhook(job(registration.id, event), 'message-a');
    await deliverWebhook(job(registration.id, event), 'message-a');
    await deliverWebhook(job(registration.id, event), 'message-b');
    // Three first attempts in-process, then exactly one retry from the queue (the receiver answers 200 to it).
    expect(await requestsAfterRetryWindow(receiver, 4)).toBe(4);
    expect(new Set(receiver.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([event.id]));
    // Deadlines for what the queue delivers are 30 s and the test 120 s: a fresh clone's run without
    // Chromium, beside another full run on the same 2 cores, missed 10 s and 30 s.
  }, 120_000);

  it('does not let a 410 disable a registration the user changed meanwhile (the disable is conditional on the registration as read)', async () => {
    const { org, receiver, registration } = await setUp();
    const read = (await getWebhookRegistration(registration.id))!;
    await call('POST', `/webhook-registrations/${registration.id}`, {
      key: org.workspaceKey,
      body: { url: `${receiver.url}?v=2`, enabled: true },
    });
    expect(await updateWebhookRegistration(read.id, { enabled: false }, new Date().toISOString(), read.modifiedAt)).toBe('stale');
    expect((await getWebhookRegistration(registration.id))?.enabled).toBe(true);
    expect(await updateWebhookRegistration(randomUUID(), { enabled: false }, new Date().toISOString(), read.modifiedAt)).toBeUndefined();
  });

  it('starts the 5-day count afresh on a re-enable and on a new URL', async () => {
    const { org, receiver, registration } = await setUp();
    const setFailing = () =>
      getDb().send(
        new UpdateCommand({
          TableName: getConfig().tableName,
          Key: webhookRegistrationKey(registration.id),
          UpdateExpression: 'SET failingSince = :at',
          ExpressionAttributeValues: { ':at': '2020-01-01T00:00:00.000Z' },
        }),
      );
    await setFailing();
    await call('POST', `/webhook-registrations/${registration.id}`, {
      key: org.workspaceKey,
      body: { url: `${receiver.url}?v=2`, enabled: true },
    });
    expect((await getWebhookRegistration(registration.id))?.failingSince).toBeUndefined();
    await setFailing();
    await call('POST', `/webhook-registrations/${registration.id}`, {
      key: org.workspaceKey,
      body: { url: `${receiver.url}?v=2`, enabled: false },
    });
    expect((await getWebhookRegistration(registration.id))?.failingSince).toBe('2020-01-01T00:00:00.000Z');
    await call('POST', `/webhook-registrations/${registration.id}`, {
      key: org.workspaceKey,
      body: { url: `${receiver.url}?v=2`, enabled: true },
    });
    expect((await getWebhookRegistration(registration.id))?.failingSince).toBeUndefined();
  });

  it(`caps a workspace at ${MAX_WEBHOOK_REGISTRATIONS} registrations, exactly, under 40 concurrent creations; a deletion frees a place`, async () => {
    const org = await makeOrganization();
    const responses = await Promise.all(
      Array.from({ length: 40 }, () => call('POST', '/webhook-registrations', { key: org.workspaceKey, body: { url: LOOPBACK_HOOK_URL } })),
    );
    const created = responses.filter((response) => response.status === 200);
    expect(created).toHaveLength(MAX_WEBHOOK_REGISTRATIONS);
    for (const refused of responses.filter((response) => response.status !== 200)) expectConflict(refused, 'webhook-registration-limit');
    expectConflict(
      await call('POST', '/webhook-registrations', { key: org.workspaceKey, body: { url: LOOPBACK_HOOK_URL } }),
      'webhook-registration-limit',
    );
    expect((await call('DELETE', `/webhook-registrations/${created[0]!.body.data.id}`, { key: org.workspaceKey })).status).toBe(204);
    expect((await call('POST', '/webhook-registrations', { key: org.workspaceKey, body: { url: LOOPBACK_HOOK_URL } })).status).toBe(200);
  });

  it('refuses to redeliver an event whose type the registration no longer receives (409), as it refuses while disabled', async () => {
    const { org, receiver, registration } = await setUp();
    const event = markupEvent(org.workspaceId);
    await enqueueWebhookDeliveries([job(registration.id, event)]);
    await eventually(
      async () => receiver.requests.length,
      (count) => count >= 1,
      30_000,
    );
    const log = await eventually(
      async () =>
        (await call('GET', `/webhook-registrations/${registration.id}/deliveries`, { key: org.workspaceKey })).body.data.data as {
          id: string;
        }[],
      (entries) => entries.length >= 1,
      10_000,
    );
    await call('POST', `/webhook-registrations/${registration.id}`, {
      key: org.workspaceKey,
      body: { url: receiver.url, eventTypes: ['comment_created'], enabled: true },
    });
    expectConflict(
      await call('POST', `/webhook-registrations/${registration.id}/deliveries/${log[0]!.id}/redeliver`, { key: org.workspaceKey }),
      'webhook-event-type-not-subscribed',
    );
  });
});
