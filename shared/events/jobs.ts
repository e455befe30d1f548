import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { getSqs } from '../clients.js';
import { getConfig } from '../config.js';
import type { DeliverableEvent } from '../db/events.js';
import { logger } from '../logger.js';

/** Jobs of the thumbnail renderer (functions/thumbnail-renderer). */
export type ThumbnailJob =
  | { type: 'render-thumbnail'; markupId: string }
  /** One view mode's full-page screenshot and layout of a webpage markup (queued by render-thumbnail). */
  | { type: 'render-page-screenshot'; markupId: string; viewModeId: string }
  /** Boxes of threads' selectors missing from a view mode's layout (queued when a webpage thread is created). */
  | { type: 'locate-page-elements'; markupId: string; viewModeId: string };

/** Puts a job on the thumbnails queue. */
export async function enqueueThumbnail(job: ThumbnailJob): Promise<void> {
  const queueUrl = getConfig().thumbnailQueueUrl;
  if (!queueUrl) throw new Error('THUMBNAIL_QUEUE_URL is not set: this function was not granted the thumbnails queue.');
  await getSqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
}

/**
 * One batch of an archive job (archive-all, NEVER_STORE with applyToExisting): the workspace's
 * retained originals after `after`, in markup id order.
 */
export type ArchiveOriginalsJob = { type: 'archive-originals'; jobId: string; workspaceId: string; includeKept: boolean; after?: string };

/** Jobs of the conversion worker (functions/conversion/jobs.ts). */
export type ConversionJob =
  | { type: 'convert-markup'; markupId: string }
  | ArchiveOriginalsJob
  | { type: 'delete-objects'; keys: string[] }
  | { type: 'delete-markup-objects'; markupIds: string[] }
  | { type: 'delete-workspace-content'; workspaceId: string; folderIds: string[] }
  | { type: 'screenshot-thumbnail'; markupId: string; threadId: string; screenshotId: string };

/** Puts a job on the conversion queue. */
export async function enqueueConversion(job: ConversionJob): Promise<void> {
  const queueUrl = getConfig().conversionQueueUrl;
  if (!queueUrl) throw new Error('CONVERSION_QUEUE_URL is not set: this function was not granted the conversion queue.');
  await getSqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
}

/** One batch of a recorded cross-workspace folder move (functions/item-moves). */
export type MoveJob = { type: 'carry-move'; folderId: string };

/** Puts a move job on the moves queue, after `delaySeconds` (at most 900) when given. */
export async function enqueueMove(job: MoveJob, options: { delaySeconds?: number } = {}): Promise<void> {
  const queueUrl = getConfig().moveQueueUrl;
  if (!queueUrl) throw new Error('MOVE_QUEUE_URL is not set: this function was not granted the moves queue.');
  const delay = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(options.delaySeconds ?? 0)));
  await getSqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job), ...(delay > 0 ? { DelaySeconds: delay } : {}) }));
}

/**
 * Hands a conversion dead letter its consumer has handled on to the hold queue, where it waits for
 * `admin queue redrive --queue conversion` (the body as it came: conversion jobs carry no attributes).
 */
export async function holdConversionDeadLetter(body: string): Promise<void> {
  const queueUrl = getConfig().conversionDeadLetterHoldQueueUrl;
  if (!queueUrl) throw new Error('CONVERSION_DEAD_LETTER_HOLD_QUEUE_URL is not set: this function was not granted the conversion hold queue.');
  await getSqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
}

/**
 * Queues stored objects for deletion by the conversion worker, 1000 keys to a job, and answers the
 * keys it queued. The records that named them are already gone, so a failure is logged, not thrown;
 * a caller that recorded the deletion as pending (archived originals) keeps the record of a key not
 * queued, for the pending-work sweep.
 */
export async function deleteObjectsLater(keys: readonly string[], context: Record<string, unknown>): Promise<string[]> {
  const queued: string[] = [];
  for (let i = 0; i < keys.length; i += 1000) {
    const chunk = keys.slice(i, i + 1000);
    try {
      await enqueueConversion({ type: 'delete-objects', keys: chunk });
      queued.push(...chunk);
    } catch (error) {
      logger.error('objects not queued for deletion', { ...context, keys: chunk, error });
    }
  }
  return queued;
}

/** Deleted markups whose prefixes one `delete-markup-objects` job empties. */
export const MAX_MARKUPS_PER_OBJECTS_JOB = 100;

/**
 * Queues the deletion of everything under deleted markups' prefixes (DESIGN.md "Deletion takes
 * everything"), MAX_MARKUPS_PER_OBJECTS_JOB markups to a job, as `deleteObjectsLater` does keys: the
 * records are gone, so a failure is logged with what to re-queue, not thrown.
 */
export async function deleteMarkupObjectsLater(markupIds: readonly string[]): Promise<void> {
  for (let i = 0; i < markupIds.length; i += MAX_MARKUPS_PER_OBJECTS_JOB) {
    const job = { type: 'delete-markup-objects' as const, markupIds: markupIds.slice(i, i + MAX_MARKUPS_PER_OBJECTS_JOB) };
    try {
      await enqueueConversion(job);
    } catch (error) {
      logger.error('objects of deleted markups not queued for deletion', { job, error });
    }
  }
}

/**
 * One delivery of one event to one webhook registration (functions/webhook-delivery). The same
 * `event.id` (the `webhook-id`) travels on every attempt; the body is built once per event.
 */
export type WebhookDeliveryJob = {
  type: 'deliver-webhook';
  registrationId: string;
  event: DeliverableEvent;
  /** 1 for the first attempt, 2… for the retries of the schedule. */
  attempt: number;
  /** Epoch ms before which the attempt must not run: retries wait longer than SQS's 15-minute delay. */
  notBefore?: number;
  /** An attempt asked for through the API (redeliver): exactly one attempt, no retries after it. */
  redelivery?: true;
  /** The delivery-log entry of the attempt this retry follows, whose `nextRetryAt` announced it. */
  previousAttemptId?: string;
};

/** SQS's largest per-message delay. */
export const MAX_DELAY_SECONDS = 900;

/**
 * Puts delivery jobs on the webhook-delivery queue, ten to a SendMessageBatch, each delayed by
 * `delaySeconds` (at most 900). Throws when any entry was not accepted, so a caller that must not
 * lose one (the stream fan-out) fails and is retried; a repeat is harmless (same `webhook-id`).
 */
export async function enqueueWebhookDeliveries(jobs: readonly WebhookDeliveryJob[], options: { delaySeconds?: number } = {}): Promise<void> {
  const queueUrl = getConfig().webhookQueueUrl;
  if (!queueUrl) throw new Error('WEBHOOK_QUEUE_URL is not set: this function was not granted the webhook-delivery queue.');
  const delay = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(options.delaySeconds ?? 0)));
  for (let i = 0; i < jobs.length; i += 10) {
    const batch = jobs.slice(i, i + 10);
    const result = await getSqs().send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((job, index) => ({ Id: String(index), MessageBody: JSON.stringify(job), ...(delay > 0 ? { DelaySeconds: delay } : {}) })),
      }),
    );
    if ((result.Failed ?? []).length > 0) throw new Error(`webhook deliveries not queued: ${JSON.stringify(result.Failed)}`);
  }
}

/**
 * Puts a delivery that failed its last attempt on the webhook queue's dead-letter queue, where it is
 * kept for inspection (DESIGN.md "Webhook deliveries").
 */
export async function sendWebhookDeadLetter(job: WebhookDeliveryJob): Promise<void> {
  const queueUrl = getConfig().webhookDeadLetterQueueUrl;
  if (!queueUrl) throw new Error('WEBHOOK_DEAD_LETTER_QUEUE_URL is not set: this function was not granted the webhook dead-letter queue.');
  await getSqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
}
