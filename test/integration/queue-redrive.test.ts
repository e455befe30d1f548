import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_FAILURE_MESSAGE } from '../../functions/conversion/convert-markup.js';
import { objectCreatedEvent } from '../../infra/local/s3-events.js';
import { startLocalStack, type LocalStack } from '../../infra/local/stack.js';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { listEvents } from '../../shared/db/events.js';
import { put, transact } from '../../shared/db/core/transact.js';
import { uploadKey, uploadObjectKey } from '../../shared/db/uploads.js';
import { getItem, type MarkupRecord } from '../../shared/db/items.js';
import type { WebhookDeliveryJob } from '../../shared/events/jobs.js';
import { conversionClients, makePendingMarkup, queueDepth, sendJob, waitUntilDrained } from '../support/conversion-jobs.js';
import { eventually } from '../support/polling.js';
import { runAdminAsync } from '../support/processes.js';
import { makePdf } from '../support/sample-files.js';

/**
 * A local stack of this file's own: a redrive moves every dead letter of a queue, so on the run's
 * shared stack it would also move (and work again) the dead jobs other files leave there, and
 * `{ moved: 1 }` would depend on what else ran.
 */
let local: LocalStack;
let dataDir: string;
let clients: ReturnType<typeof conversionClients>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'review-board-redrive-'));
  local = await startLocalStack({ port: 0, dataDir, memory: true });
  clients = conversionClients(local.services);
}, 120_000);

afterAll(async () => {
  clients?.sqs.destroy();
  clients?.s3.destroy();
  await local?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const markupOf = async (markupId: string) => (await getItem(markupId, true)) as MarkupRecord;
const readyEvents = async (markup: MarkupRecord) =>
  (await listEvents(markup.workspaceId)).filter((event) => event.type === 'markup_ready' && event.markupId === markup.id);
const conversionQueues = () => local.services.queues.conversion;

/** A one-page PDF markup as POST /markups/from-files leaves it: pending, its original retained. */
async function pendingPdfMarkup(overrides: Partial<MarkupRecord> = {}): Promise<MarkupRecord> {
  const bytes = await makePdf([{ width: 200, height: 100 }]);
  const { markup } = await makePendingMarkup(
    clients,
    { type: 'pdf', bytes, filename: 'redriven.pdf', mimeType: 'application/pdf' },
    { hasRetainedOriginal: true, ...overrides },
  );
  return markup;
}

describe('admin queue redrive --queue conversion: dead conversions go back to the conversion queue and convert (issue 16, item 3)', () => {
  it('moves a conversion job forced into the dead-letter queue back, and the markup the consumer failed then converts', async () => {
    const markup = await pendingPdfMarkup();
    await sendJob(clients, markup.id, 'deadLetters');
    const failed = await eventually(
      () => markupOf(markup.id),
      (current) => current.conversionStatus === 'failed',
      30_000,
    );
    const held = await eventually(
      () => queueDepth(clients, conversionQueues().deadLetterHoldUrl!),
      (depth) => depth.visible === 1,
      30_000,
    );
    const shown = await runAdminAsync(dataDir, ['queue', 'show']);

    const redriven = await runAdminAsync(dataDir, ['queue', 'redrive', '--queue', 'conversion']);
    const converted = await eventually(
      () => markupOf(markup.id),
      (current) => current.conversionStatus === 'ready',
      30_000,
    );

    expect(failed).toMatchObject({ isReady: true, conversionError: INTERNAL_FAILURE_MESSAGE });
    expect(held).toEqual({ visible: 1, inFlight: 0 });
    expect(shown.status).toBe(0);
    expect(Object.keys(shown.json).sort()).toEqual(['conversion', 'moves', 'thumbnails', 'uploads', 'webhooks']);
    expect(shown.json.conversion).toEqual({
      queue: { visible: 0, inFlight: 0, delayed: 0 },
      deadLetterQueue: { visible: 0, inFlight: 0, delayed: 0 },
      deadLetterHold: { visible: 1, inFlight: 0, delayed: 0 },
      redriveFrom: 'deadLetterHold',
    });
    expect(redriven).toMatchObject({ status: 0, json: { moved: 1 } });
    expect(converted).toMatchObject({ isReady: true, conversionStatus: 'ready', document: { pageCount: 1 } });
    expect(converted.conversionError).toBeUndefined();
    // One for the failure, which listeners were told of, and one for the conversion.
    expect(await readyEvents(markup)).toHaveLength(2);
    expect(await queueDepth(clients, conversionQueues().deadLetterHoldUrl!)).toEqual({ visible: 0, inFlight: 0 });
    expect(await waitUntilDrained(clients, conversionQueues().url, 30_000)).toEqual({ visible: 0, inFlight: 0 });
  }, 120_000);

  it('leaves a markup whose file could not be converted as it is: its redriven job changes nothing', async () => {
    const markup = await pendingPdfMarkup({
      isReady: true,
      conversionStatus: 'failed',
      conversionError: 'The PDF is damaged and cannot be read.',
    });
    await sendJob(clients, markup.id, 'deadLetterHold');

    const redriven = await runAdminAsync(dataDir, ['queue', 'redrive', '--queue', 'conversion']);
    const drained = await waitUntilDrained(clients, conversionQueues().url, 30_000);

    expect(redriven).toMatchObject({ status: 0, json: { moved: 1 } });
    expect(drained).toEqual({ visible: 0, inFlight: 0 });
    expect(await markupOf(markup.id)).toEqual(markup);
  }, 120_000);
});

describe('admin queue redrive for the queues without a dead-letter consumer: webhooks and uploads', () => {
  it('moves a dead webhook delivery from the dead-letter queue back to the delivery queue', async () => {
    const { webhookDelivery } = local.services.queues;
    const job: WebhookDeliveryJob = {
      type: 'deliver-webhook',
      registrationId: randomUUID(),
      event: { id: randomUUID(), type: 'webhook.test', workspaceId: randomUUID(), createdAt: new Date().toISOString() },
      attempt: 8,
    };
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: webhookDelivery.deadLetterUrl, MessageBody: JSON.stringify(job) }));

    const redriven = await runAdminAsync(dataDir, ['queue', 'redrive', '--queue', 'webhooks']);

    expect(redriven).toMatchObject({ status: 0, json: { moved: 1 } });
    expect(await queueDepth(clients, webhookDelivery.deadLetterUrl)).toEqual({ visible: 0, inFlight: 0 });
    // The worker took it (and dropped it: the registration does not exist).
    expect(await waitUntilDrained(clients, webhookDelivery.url, 30_000)).toEqual({ visible: 0, inFlight: 0 });
  }, 60_000);

  it('moves an S3 notification upload-confirmed gave up on back to the uploads queue, and the upload is then recorded as landed', async () => {
    const { uploads } = local.services.queues;
    const workspaceId = randomUUID();
    const fileId = randomUUID();
    const key = uploadObjectKey(workspaceId, fileId, 'late notice é.png');
    // The object lands before its policy is on record, so the notification S3 sends now finds nothing to record.
    const stored = await clients.s3.send(
      new PutObjectCommand({
        Bucket: local.services.bucketName,
        Key: key,
        Body: Buffer.from('forty-two bytes of something that is a png'),
        ContentType: 'image/png',
      }),
    );
    await waitUntilDrained(clients, uploads.url, 30_000);
    await transact([put({ ...uploadKey(fileId), entity: 'Upload', fileId, workspaceId, key })]);
    // The same notification, as it waits in the dead-letter queue after every try failed.
    const notification = objectCreatedEvent({
      eventName: 'ObjectCreated:Put',
      region: local.services.region,
      bucket: local.services.bucketName,
      key,
      size: 42,
      eTag: stored.ETag!,
      principalAccessKeyId: local.services.credentials.accessKeyId,
      ownerAccessKeyId: local.services.credentials.accessKeyId,
      sourceIp: '127.0.0.1',
      requestId: 'redrive-test',
      hostId: 'redrive-test',
    });
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: uploads.deadLetterUrl, MessageBody: JSON.stringify(notification) }));
    const before = await landedOf(fileId);
    const shown = await runAdminAsync(dataDir, ['queue', 'show']);

    const redriven = await runAdminAsync(dataDir, ['queue', 'redrive', '--queue', 'uploads']);
    const landed = await eventually(
      () => landedOf(fileId),
      (item) => item?.landedAt !== undefined,
      30_000,
    );

    expect(before).toMatchObject({ fileId });
    expect(before?.landedAt).toBeUndefined();
    expect(shown.json.uploads).toEqual({
      queue: { visible: 0, inFlight: 0, delayed: 0 },
      deadLetterQueue: { visible: 1, inFlight: 0, delayed: 0 },
      redriveFrom: 'deadLetterQueue',
    });
    expect(redriven).toMatchObject({ status: 0, json: { moved: 1 } });
    expect(landed).toMatchObject({ landedSize: 42, landedEtag: stored.ETag, landedContentType: 'image/png' });
    expect(await queueDepth(clients, uploads.deadLetterUrl)).toEqual({ visible: 0, inFlight: 0 });
    expect(await waitUntilDrained(clients, uploads.url, 30_000)).toEqual({ visible: 0, inFlight: 0 });
  }, 120_000);
});

const landedOf = async (fileId: string) =>
  (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: uploadKey(fileId), ConsistentRead: true }))).Item as
    { fileId: string; landedAt?: string; landedSize?: number; landedEtag?: string; landedContentType?: string } | undefined;
