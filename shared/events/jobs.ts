import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { getSqs } from '../clients.js';
import { getConfig } from '../config.js';

/** Jobs of the thumbnail renderer (functions/thumbnail-renderer). */
export type ThumbnailJob = { type: 'render-thumbnail'; markupId: string };

/** Puts a job on the thumbnails queue. */
export async function enqueueThumbnail(job: ThumbnailJob): Promise<void> {
  const queueUrl = getConfig().thumbnailQueueUrl;
  if (!queueUrl) throw new Error('THUMBNAIL_QUEUE_URL is not set: this function was not granted the thumbnails queue.');
  await getSqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
}

/** Jobs of the conversion worker (functions/conversion/jobs.ts). */
export type ConversionJob = { type: 'convert-markup'; markupId: string } | { type: 'delete-objects'; keys: string[] };

/** Puts a job on the conversion queue. */
export async function enqueueConversion(job: ConversionJob): Promise<void> {
  const queueUrl = getConfig().conversionQueueUrl;
  if (!queueUrl) throw new Error('CONVERSION_QUEUE_URL is not set: this function was not granted the conversion queue.');
  await getSqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
}
