import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
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
  error instanceof NotFound || error instanceof NoSuchKey || (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404);

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

/** Stores `body` as `contentType`; a type not served inline (`servingOf`) is stored with `Content-Disposition: attachment`, as uploads are. */
export async function putObject(key: string, body: Buffer, contentType: string, metadata: Record<string, string> = {}): Promise<StoredObject> {
  const disposition = servingOf(contentType).disposition === 'attachment' ? { ContentDisposition: 'attachment' } : {};
  const stored = await getS3().send(new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: body, ContentType: contentType, ...disposition, Metadata: metadata }));
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
