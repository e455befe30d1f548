import { randomUUID } from 'node:crypto';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { getItem, type MarkupRecord, type MarkupType } from '../../shared/db/items.js';
import type { ServicesInfo } from '../../infra/local/stack.js';
import { localStack, newOrganization } from './api.js';
import { makeMarkup, workspaceOf } from './items.js';

/**
 * Clients on this run's emulators (or on those of a file's own local stack), for tests that drive
 * the conversion queue and read the bucket.
 */
export function conversionClients(services: ServicesInfo = localStack().services) {
  return {
    services,
    sqs: new SQSClient({ region: services.region, endpoint: services.endpoints.sqs, credentials: services.credentials }),
    s3: new S3Client({ region: services.region, endpoint: services.endpoints.s3, forcePathStyle: true, credentials: services.credentials }),
  };
}

type Clients = ReturnType<typeof conversionClients>;

export interface Upload {
  type: Exclude<MarkupType, 'webpage'>;
  bytes: Buffer;
  filename: string;
  mimeType: string;
  /** False: the record names a source that is not in the bucket. */
  stored?: boolean;
}

/**
 * A file markup as `POST /markups/from-files` leaves it for the worker: the uploaded source in the
 * bucket, `isReady` false, `conversionStatus` pending. Sources live outside `uploads/` so the
 * upload-confirmed pump leaves them alone. On the stack the clients are for (conversionClients
 * pointed this process at it).
 */
export async function makePendingMarkup({ s3, services }: Clients, upload: Upload, overrides: Partial<MarkupRecord> = {}) {
  const org = await newOrganization();
  const workspace = await workspaceOf(org.workspaceId);
  const key = `test-sources/${randomUUID()}/${upload.filename}`;
  if (upload.stored !== false)
    await s3.send(new PutObjectCommand({ Bucket: services.bucketName, Key: key, Body: upload.bytes, ContentType: upload.mimeType }));
  const markup = await makeMarkup({
    workspaceId: org.workspaceId,
    organizationId: workspace.organizationId,
    parentFolderId: workspace.rootFolderId,
    name: upload.filename,
    type: upload.type,
    url: undefined,
    isReady: false,
    conversionStatus: 'pending',
    source: { key, mimeType: upload.mimeType, filesize: upload.bytes.length, filename: upload.filename },
    ...(upload.type === 'image' ? { images: [], originalMimeType: upload.mimeType } : {}),
    ...overrides,
  });
  return { org, markup };
}

/** Puts a convert-markup job on the conversion queue, or straight on its dead-letter queue or the hold queue behind that. */
export async function sendJob(
  { sqs, services }: Clients,
  markupId: string,
  queue: 'queue' | 'deadLetters' | 'deadLetterHold' = 'queue',
): Promise<void> {
  const { conversion } = services.queues;
  const url = { queue: conversion.url, deadLetters: conversion.deadLetterUrl, deadLetterHold: conversion.deadLetterHoldUrl! }[queue];
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify({ type: 'convert-markup', markupId }) }));
}

/** Waits until the worker has finished the markup (isReady true). */
export async function waitUntilReady(markupId: string, timeoutMs = 30_000): Promise<MarkupRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = (await getItem(markupId, true)) as MarkupRecord;
    if (current.isReady) return current;
    if (Date.now() > deadline) throw new Error(`markup ${markupId} is still not ready: ${JSON.stringify(current)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Messages on a queue: waiting, and received but neither deleted nor returned yet (in flight). */
export async function queueDepth({ sqs }: Clients, url: string): Promise<{ visible: number; inFlight: number }> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

/**
 * Polls until the queue holds no message at all (none waiting, none in flight), or the deadline;
 * answers the last depth seen. A job the worker acknowledged leaves nothing behind; one it failed
 * stays in flight for the queue's visibility timeout (90 minutes for conversion).
 */
export async function waitUntilDrained(clients: Clients, url: string, timeoutMs = 10_000): Promise<{ visible: number; inFlight: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const depth = await queueDepth(clients, url);
    if ((depth.visible === 0 && depth.inFlight === 0) || Date.now() > deadline) return depth;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function keysUnder({ s3, services }: Clients, prefix: string): Promise<string[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: services.bucketName, Prefix: prefix }));
  return (listed.Contents ?? []).map((object) => object.Key!).sort();
}

/** An SQS record as the worker receives it on its `receiveCount`th delivery. */
export const deliveryRecord = (receiveCount: number) =>
  ({ attributes: { ApproximateReceiveCount: String(receiveCount) } }) as unknown as SQSRecord;
