import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../infra/local/stack.js';
import { ENV, resetConfig } from '../../shared/config.js';
import { eventItem, listEvents } from '../../shared/db/events.js';
import { transact } from '../../shared/db/core/transact.js';
import { insertWebhookRegistration } from '../../shared/db/webhooks.js';
import { MAX_WEBHOOK_REGISTRATIONS } from '../../shared/domain/webhooks/registrations.js';
import { createOrganization } from '../../shared/domain/organizations/organizations.js';
import { enqueueWebhookDeliveries, type WebhookDeliveryJob } from '../../shared/events/jobs.js';
import { eventually } from '../support/polling.js';
import { makeTypedMarkup, threadBody } from '../support/threads.js';
import { startWebhookReceiver, verifyWithStandardWebhooks } from '../support/webhook-receiver.js';

/**
 * A local stack of this file's own (the fault hook is in process only, and cutting the run's shared
 * stack off its queues would fail other files' tests).
 */
let local: LocalStack;
let dataDir: string;
let sqs: SQSClient;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'review-board-outage-'));
  local = await startLocalStack({ port: 0, dataDir, memory: true });
  const { services } = local;
  // One attempt per call, so a refused call shows at once instead of after the SDK's retries.
  sqs = new SQSClient({ endpoint: services.endpoints.sqs, region: services.region, credentials: services.credentials, maxAttempts: 1 });
}, 120_000);

afterAll(async () => {
  sqs?.destroy();
  await local?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const attributes = () =>
  sqs.send(new GetQueueAttributesCommand({ QueueUrl: local.services.queues.webhookDelivery.url, AttributeNames: ['QueueArn'] }));

const job = (): WebhookDeliveryJob => ({
  type: 'deliver-webhook',
  registrationId: randomUUID(),
  event: { id: randomUUID(), type: 'webhook.test', workspaceId: randomUUID(), createdAt: new Date().toISOString() },
  attempt: 1,
});

/** A request to this file's own stack's API, with its seeded workspace key unless another is given. */
async function api(method: string, path: string, body: unknown, key = local.stack.workspaceApiKey): Promise<{ status: number; body: any }> {
  const response = await fetch(new URL(`/api/v2${path}`, local.stack.baseUrl), {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Service-API-Version': '2023-02-22', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** A queue of this file's own as the fan-out's target, which no worker consumes: every job queued stays there to be read. */
async function probeQueue(): Promise<string> {
  const probe = (await sqs.send(new CreateQueueCommand({ QueueName: `outage-probe-${randomUUID()}` }))).QueueUrl!;
  process.env[ENV.webhookQueueUrl] = probe;
  resetConfig();
  return probe;
}

/** Points the fan-out back at the real delivery queue, which this stack's worker consumes. */
function deliveryQueue(): void {
  process.env[ENV.webhookQueueUrl] = local.services.queues.webhookDelivery.url;
  resetConfig();
}

/** Receives from `queue` (each message once) until `done` holds of everything received, or 20 s passed. */
async function receiveJobs(queue: string, done: (jobs: WebhookDeliveryJob[]) => boolean): Promise<WebhookDeliveryJob[]> {
  const jobs: WebhookDeliveryJob[] = [];
  await eventually(
    async () => {
      const received = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queue, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 600 }),
      );
      for (const message of received.Messages ?? []) jobs.push(JSON.parse(message.Body!) as WebhookDeliveryJob);
      return jobs;
    },
    done,
    20_000,
  );
  return jobs;
}

describe('the outbox reaches the delivery queue through the stream pump', () => {
  it('queues the markup_created job of a markup created through the API, well within a second of the response', async () => {
    const probe = await probeQueue();
    const registration = await api('POST', '/webhook-registrations', { url: 'http://127.0.0.1:9/hook', eventTypes: ['markup_created'] });
    expect(registration.status).toBe(200);

    const created = await api('POST', '/markups/url', { url: 'https://example.com/stream' });
    const answeredAt = Date.now();
    const jobs = await receiveJobs(probe, (received) => received.length >= 1);
    const queuedAfterMs = Date.now() - answeredAt;

    expect(created.status).toBe(200);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      type: 'deliver-webhook',
      attempt: 1,
      registrationId: registration.body.data.id,
      event: { type: 'markup_created', markupId: created.body.data.id },
    });
    expect(queuedAfterMs).toBeLessThan(1_000);
    console.info(`stream fan-out: markup_created job read from the queue ${queuedAfterMs} ms after the API answered`);
  });
});

describe('fault hook: the SQS endpoint of the local stack can be made unreachable (issue 12 fault injection)', () => {
  it('fails every SQS call while unreachable, open keep-alive connections included, and serves them again once reachable', async () => {
    const before = await attributes();
    local.faults.setQueuesReachable(false);
    const whileDown = await attributes().then(
      () => 'answered',
      (error: Error) => error.name,
    );
    const enqueueWhileDown = await enqueueWebhookDeliveries([job()]).then(
      () => 'queued',
      () => 'failed',
    );
    local.faults.setQueuesReachable(true);
    const after = await attributes();
    await enqueueWebhookDeliveries([job()]);

    expect(before.Attributes?.QueueArn).toBe(local.services.queues.webhookDelivery.arn);
    expect(whileDown).not.toBe('answered');
    expect(enqueueWhileDown).toBe('failed');
    expect(after.Attributes?.QueueArn).toBe(local.services.queues.webhookDelivery.arn);
  });

  it('loses no event emitted while the delivery queue is unreachable: the stream pump retries the fan-out and all 50 are queued once it is back', async () => {
    const probe = await probeQueue();
    const org = await createOrganization('Outage');
    const now = new Date().toISOString();
    const registrationId = randomUUID();
    await insertWebhookRegistration(
      {
        id: registrationId,
        organizationId: org.organizationId,
        workspaceId: org.workspaceId,
        url: 'http://127.0.0.1:9/hook',
        eventTypes: null,
        enabled: true,
        signingKey: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
        createdAt: now,
        modifiedAt: now,
      },
      MAX_WEBHOOK_REGISTRATIONS,
    );

    local.faults.setQueuesReachable(false);
    const outageStarted = Date.now();
    for (let i = 0; i < 50; i++)
      await transact([eventItem({ type: 'markup_created', workspaceId: org.workspaceId, markupId: randomUUID() })]);
    // The outage itself lasts a set time (the scenario), long enough for the pump's first attempts and backoff to fail.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 3_000 - (Date.now() - outageStarted))));
    local.faults.setQueuesReachable(true);
    const restoredAt = Date.now();

    const jobs = await receiveJobs(probe, (received) => new Set(received.map((queued) => queued.event.id)).size >= 50);

    expect(new Set(jobs.map((queued) => queued.event.id)).size).toBe(50);
    expect(new Set(jobs.map((queued) => queued.registrationId))).toEqual(new Set([registrationId]));
    console.info(`queue outage: all 50 events queued ${Date.now() - restoredAt} ms after the queue came back`);
  }, 60_000);
});

describe('queue outage end to end (issue 12 fault injection): nothing emitted during the outage is lost', () => {
  it('delivers all 50 events emitted while the delivery queue was unreachable for 30 s, once it is back, signed, each once', async () => {
    deliveryQueue();
    const org = await createOrganization('Outage delivery');
    const key = org.workspaceApiKey.apiKey;
    const receiver = await startWebhookReceiver();
    try {
      const registration = await api('POST', '/webhook-registrations', { url: receiver.url, eventTypes: ['comment_created'] }, key);
      expect(registration.status).toBe(200);
      const markup = await makeTypedMarkup(org, 'webpage');

      local.faults.setQueuesReachable(false);
      const outageStarted = Date.now();
      // Creating a thread needs no queue: the API keeps answering while its events wait in the outbox.
      const statuses: number[] = [];
      for (let i = 0; i < 50; i++) statuses.push((await api('POST', '/threads', threadBody(markup), key)).status);
      const answeredWithinOutage = Date.now() - outageStarted;
      // The outage lasts a set time (the scenario): long enough for the pump's backoff to reach its 5 s cap.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 30_000 - (Date.now() - outageStarted))));
      const arrivedDuringOutage = receiver.requests.length;
      local.faults.setQueuesReachable(true);
      const restoredAt = Date.now();

      const requests = await eventually(
        async () => [...receiver.requests],
        (got) => new Set(got.map((request) => request.headers['webhook-id'])).size >= 50,
        30_000,
      );
      const lastArrivalMs = Math.max(...requests.map((request) => request.at)) - restoredAt;
      const emitted = await listEvents(org.workspaceId);

      expect(statuses).toEqual(Array.from({ length: 50 }, () => 200));
      expect(answeredWithinOutage).toBeLessThan(30_000);
      expect(arrivedDuringOutage).toBe(0);
      expect(emitted).toHaveLength(50);
      expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(emitted.map((event) => event.id)));
      for (const request of requests) verifyWithStandardWebhooks(registration.body.data.signingKey, request);
      console.info(
        `queue outage: 50 threads answered in ${answeredWithinOutage} ms during the outage; all 50 events delivered ${lastArrivalMs} ms after the queue came back (${requests.length} requests)`,
      );
    } finally {
      local.faults.setQueuesReachable(true);
      await receiver.close();
    }
  }, 120_000);
});
