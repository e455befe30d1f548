import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getS3 } from '../clients.js';
import { bucketName, UNCONFIRMED_TAGGING } from './objects.js';

/** How long a browser has to start posting the file once the policy is issued. */
export const UPLOAD_POLICY_TTL_SECONDS = 15 * 60;

/** The metadata field that ties a stored object to its upload record. */
export const FILE_ID_FIELD = 'x-amz-meta-file-id';

export interface UploadPolicy {
  /** Where to POST the form. */
  url: string;
  /** Every field to send, exactly as given, before the `file` part. */
  fields: Record<string, string>;
}

/**
 * A presigned POST for exactly one object: the bucket, the exact key, the exact byte length
 * (`content-length-range` from `filesize` to `filesize`), the exact `Content-Type`, the file id
 * metadata and the `unconfirmed` tag are all signed, so storage refuses any other file, type or
 * destination (Uploads rules 1 and 3).
 */
export async function createUploadPolicy(input: { key: string; contentType: string; filesize: number; fileId: string }): Promise<UploadPolicy & { expiresAt: Date }> {
  const expiresAt = new Date(Date.now() + UPLOAD_POLICY_TTL_SECONDS * 1000);
  const bucket = bucketName();
  const post = await createPresignedPost(getS3(), {
    Bucket: bucket,
    Key: input.key,
    Conditions: [
      { bucket },
      ['eq', '$key', input.key],
      ['content-length-range', input.filesize, input.filesize],
      ['eq', '$Content-Type', input.contentType],
      ['eq', `$${FILE_ID_FIELD}`, input.fileId],
      ['eq', '$tagging', UNCONFIRMED_TAGGING],
    ],
    Fields: { 'Content-Type': input.contentType, [FILE_ID_FIELD]: input.fileId, tagging: UNCONFIRMED_TAGGING },
    Expires: UPLOAD_POLICY_TTL_SECONDS,
  });
  return { url: post.url, fields: post.fields, expiresAt };
}
