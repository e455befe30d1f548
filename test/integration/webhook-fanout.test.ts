import { randomUUID } from 'node:crypto';
import { CreateQueueCommand, DeleteQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fanOut } from '../../functions/webhook-fanout/fanout.js';
import { ENV, resetConfig } from '../../shared/config.js';
import type { EventRecord, EventType } from '../../shared/db/events.js';
import type { WebhookDeliveryJob } from '../../shared/events/jobs.js';
import { localStack, makeOrganization, type Org } from '../support/api.js';
import { eventually } from '../support/polling.js';
import { createWebhookRegistration } from '../support/webhooks.js';

let sqs: SQSClient;
let queueUrl: string;
let previousQueueUrl: string | undefined;

/** The fan-out queues to a queue of this file's own, which no poller reads: what it queued stays there to be read. */
beforeAll(async () => {
  const { services } = localStack();
  sqs = new SQSClient({ endpoint: services.endpoints.sqs, region: services.region, credentials: services.credentials });
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `fanout-probe-${randomUUID()}` }))).QueueUrl!;
  previousQueueUrl = process.env[ENV.webhookQueueUrl];
});

/** Runs the fan-out against the probe queue (set just before: `localStack()` points the config back at the stack's queues). */
function fanOutToProbe(event: DynamoDBStreamEvent, target = queueUrl) {
  process.env[ENV.webhookQueueUrl] = target;
  resetConfig();
  return fanOut(event);
}

afterAll(async () => {
  process.env[ENV.webhookQueueUrl] = previousQueueUrl;
  resetConfig();
  await sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
  sqs.destroy();
});

async function queuedJobs(count: number): Promise<WebhookDeliveryJob[]> {
  const jobs: WebhookDeliveryJob[] = [];
  await eventually(
    async () => {
      const received = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 600 }),
      );
      for (const message of received.Messages ?? []) jobs.push(JSON.parse(message.Body!) as WebhookDeliveryJob);
      return jobs.length;
    },
    (total) => total >= count,
    10_000,
  );
  return jobs;
}

const event = (org: Org, type: EventType): EventRecord => ({
  id: randomUUID(),
  type,
  workspaceId: org.workspaceId,
  markupId: randomUUID(),
  createdAt: new Date().toISOString(),
});

let sequence = 1000;
function streamRecord(item: Record<string, unknown>, eventName: 'INSERT' | 'MODIFY' = 'INSERT'): DynamoDBRecord {
  const image = marshall(item, { removeUndefinedValues: true }) as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'];
  return {
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: {
      NewImage: image,
      Keys: { PK: image!.PK!, SK: image!.SK! },
      SequenceNumber: String(sequence++),
      StreamViewType: 'NEW_IMAGE',
    },
  };
}
const single = (record: EventRecord) =>
  streamRecord({ PK: `WS#${record.workspaceId}#EVENTS`, SK: `${record.createdAt}#${record.id}`, entity: 'Event', ...record });
const batch = (records: EventRecord[]) =>
  streamRecord({
    PK: `WS#${records[0]!.workspaceId}#EVENTS`,
    SK: `${records[0]!.createdAt}#${records[0]!.id}`,
    entity: 'EventBatch',
    workspaceId: records[0]!.workspaceId,
    events: records,
  });

describe('webhook fan-out (stream records -> delivery jobs)', () => {
  it('queues one first-attempt job per event and enabled, subscribed registration, expanding an EventBatch, and skips other records', async () => {
    const org = await makeOrganization();
    const all = await createWebhookRegistration(org.workspaceKey);
    const markupsOnly = await createWebhookRegistration(org.workspaceKey, { eventTypes: ['markup_created'] });
    const commentsOnly = await createWebhookRegistration(org.workspaceKey, { eventTypes: ['comment_created'] });
    await createWebhookRegistration(org.workspaceKey, { enabled: false });
    const created = event(org, 'markup_created');
    const inBatch = [event(org, 'markup_created'), event(org, 'comment_created')];
    const ignored = event(org, 'markup_ready');

    const response = await fanOutToProbe({
      Records: [
        single(created),
        streamRecord({ PK: 'THREAD#x', SK: 'THREAD', entity: 'Thread' }),
        { ...single(ignored), eventName: 'MODIFY' },
        batch(inBatch),
      ],
    });
    const jobs = await queuedJobs(6);

    expect(response).toEqual({ batchItemFailures: [] });
    const pairs = jobs.map((job) => `${job.event.id}->${job.registrationId}`).sort();
    expect(pairs).toEqual(
      [
        `${created.id}->${all.id}`,
        `${created.id}->${markupsOnly.id}`,
        `${inBatch[0]!.id}->${all.id}`,
        `${inBatch[0]!.id}->${markupsOnly.id}`,
        `${inBatch[1]!.id}->${all.id}`,
        `${inBatch[1]!.id}->${commentsOnly.id}`,
      ].sort(),
    );
    for (const job of jobs) expect(job).toMatchObject({ type: 'deliver-webhook', attempt: 1 });
    expect(jobs.find((job) => job.event.id === created.id)!.event).toEqual(created);
  });

  it('queues nothing for a workspace without registrations', async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();
    const registration = await createWebhookRegistration(other.workspaceKey);
    const marker = event(other, 'markup_created');

    const response = await fanOutToProbe({ Records: [single(event(org, 'markup_created')), single(marker)] });
    const jobs = await queuedJobs(1);

    expect(response).toEqual({ batchItemFailures: [] });
    expect(jobs.map((job) => [job.event.id, job.registrationId])).toEqual([[marker.id, registration.id]]);
  });

  it('answers the first record it could not queue as the batch item failure, so the stream resumes there', async () => {
    const org = await makeOrganization();
    await createWebhookRegistration(org.workspaceKey);
    const records = [
      streamRecord({ PK: 'THREAD#y', SK: 'THREAD', entity: 'Thread' }),
      single(event(org, 'markup_created')),
      single(event(org, 'markup_ready')),
    ];

    const response = await fanOutToProbe({ Records: records }, `${queueUrl}-missing`);

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]!.dynamodb!.SequenceNumber }] });
  });
});
