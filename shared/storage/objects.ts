import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NotFound,
  NoSuchKey,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getS3 } from '../clients.js';
import { getConfig } from '../config.js';
import { servingOf } from './serving.js';

/**
 * Objects of the upload bucket. Uploads posted with a policy carry the tag `upload-state=unconfirmed`
 * until upload-complete retags them `confirmed`; the bucket's lifecycle rule expires objects under
 * `uploads/` still tagged unconfirmed, so policies that were used but never confirmed leave nothing
 * behind. Objects the service writes itself carry no tag and never expire.
 */
export const UPLOAD_STATE_TAG = 'upload-state';

/** The `tagging` form field of an upload policy (S3's XML tag set). */
export const UNCONFIRMED_TAGGING = `<Tagging><TagSet><Tag><Key>${UPLOAD_STATE_TAG}</Key><Value>unconfirmed</Value></Tag></TagSet></Tagging>`;

export function bucketName(): string {
  const bucket = getConfig().bucketName;
  if (!bucket) throw new Error('BUCKET_NAME is not set: this function was not granted the bucket.');
  return bucket;
}

export interface StoredObject {
  size: number;
  /** With its quotes, as S3 answers it. */
  etag: string;
  contentType: string | undefined;
}

const isMissing = (error: unknown) =>
  error instanceof NotFound ||
  error instanceof NoSuchKey ||
  (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404);

/** Size, ETag and content type of an object, or undefined when it does not exist (yet). */
export async function headObject(key: string): Promise<StoredObject | undefined> {
  try {
    const head = await getS3().send(new HeadObjectCommand({ Bucket: bucketName(), Key: key }));
    return { size: head.ContentLength ?? 0, etag: head.ETag ?? '', contentType: head.ContentType };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** The first `length` bytes of an object (fewer when it is shorter), or undefined when it does not exist. */
export async function readObjectStart(key: string, length: number): Promise<Buffer | undefined> {
  try {
    const object = await getS3().send(new GetObjectCommand({ Bucket: bucketName(), Key: key, Range: `bytes=0-${length - 1}` }));
    return Buffer.from(await object.Body!.transformToByteArray()).subarray(0, length);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/**
 * Stores `body` as `contentType`; a type not served inline (`servingOf`) is stored with `Content-Disposition: attachment`, as uploads are.
 */
export async function putObject(
  key: string,
  body: Buffer,
  contentType: string,
  metadata: Record<string, string> = {},
): Promise<StoredObject> {
  const disposition = servingOf(contentType).disposition === 'attachment' ? { ContentDisposition: 'attachment' } : {};
  const stored = await getS3().send(
    new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: body, ContentType: contentType, ...disposition, Metadata: metadata }),
  );
  return { size: body.length, etag: stored.ETag ?? '', contentType };
}

export async function deleteObject(key: string): Promise<void> {
  await getS3().send(new DeleteObjectCommand({ Bucket: bucketName(), Key: key }));
}

/** Takes a confirmed upload out of the lifecycle rule's reach (see UPLOAD_STATE_TAG). */
export async function tagObjectConfirmed(key: string): Promise<void> {
  await getS3().send(
    new PutObjectTaggingCommand({ Bucket: bucketName(), Key: key, Tagging: { TagSet: [{ Key: UPLOAD_STATE_TAG, Value: 'confirmed' }] } }),
  );
}

/**
 * Everything the service writes for a markup lives under this prefix: conversion outputs (page
 * images, video, poster), its thumbnail and its thread screenshots' thumbnails. Deleting a markup
 * deletes the prefix (DESIGN.md "Deletion takes everything"). What was uploaded (`uploads/`) is
 * named by the markup's records and deleted by key.
 */
export const markupObjectPrefix = (markupId: string) => `markups/${markupId}/`;

/** Keys listed and deleted per request: ListObjectsV2's page and DeleteObjects' limit. */
const DELETE_PAGE = 1000;

/**
 * Deletes every object under `prefix`, a ListObjectsV2 page (at most 1000 keys) and one
 * DeleteObjects at a time; answers how many it deleted. Each page is listed from the start again,
 * so objects written while it runs are taken too, up to the end of the listing. Deleting an absent
 * key succeeds, so running it again (or at once elsewhere) is harmless; a key S3 refuses throws.
 */
export async function deleteObjectsUnder(prefix: string): Promise<number> {
  if (!prefix.endsWith('/') || prefix.length < 2)
    throw new Error(`Refusing to delete under ${JSON.stringify(prefix)}: not a folder prefix.`);
  let deleted = 0;
  for (;;) {
    const listed = await getS3().send(new ListObjectsV2Command({ Bucket: bucketName(), Prefix: prefix, MaxKeys: DELETE_PAGE }));
    const keys = (listed.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : []));
    if (keys.length === 0) return deleted;
    const result = await getS3().send(
      new DeleteObjectsCommand({ Bucket: bucketName(), Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
    );
    const failed = result.Errors ?? [];
    if (failed.length > 0) throw new Error(`could not delete ${failed.map((error) => `${error.Key}: ${error.Code}`).join(', ')}`);
    deleted += keys.length;
  }
}
