import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { getSqs } from '../clients.js';
import { getConfig } from '../config.js';
import { logger } from '../logger.js';

/** Jobs of the thumbnail renderer (functions/thumbnail-renderer). */
export type ThumbnailJob = { type: 'render-thumbnail'; markupId: string };

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
  | { type: 'delete-workspace-content'; workspaceId: string; folderIds: string[] }
  | { type: 'screenshot-thumbnail'; markupId: string; threadId: string; screenshotId: string };

/** Puts a job on the conversion queue. */
export async function enqueueConversion(job: ConversionJob): Promise<void> {
  const queueUrl = getConfig().conversionQueueUrl;
  if (!queueUrl) throw new Error('CONVERSION_QUEUE_URL is not set: this function was not granted the conversion queue.');
  await getSqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
}

/**
 * Queues stored objects for deletion by the conversion worker, 1000 keys to a job. The records that
 * named them are already gone, so a failure is logged, not thrown: the objects linger until removed
 * by hand, and nothing counts their bytes any more.
 */
export async function deleteObjectsLater(keys: readonly string[], context: Record<string, unknown>): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    try {
      await enqueueConversion({ type: 'delete-objects', keys: keys.slice(i, i + 1000) });
    } catch (error) {
      logger.error('objects not queued for deletion', { ...context, keys: keys.slice(i, i + 1000), error });
    }
  }
}
