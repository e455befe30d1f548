import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { getS3 } from '../clients.js';
import { bucketName, UNCONFIRMED_TAGGING, UPLOAD_STATE_TAG } from './objects.js';
import { servingOf } from './serving.js';

/** How long a browser has to start posting the file once the policy is issued. */
export const UPLOAD_POLICY_TTL_SECONDS = 15 * 60;

/** Slack past a policy's end for storage's clock running behind ours and a post begun at the last moment. */
export const UPLOAD_POLICY_GRACE_SECONDS = 60;

/**
 * Epoch seconds after which a policy signed at `issuedAt` can no longer put an object in storage
 * (its lifetime plus the grace): what an upload whose object never landed reserves until.
 */
export function policyUsableUntilEpoch(issuedAt: Date): number {
  return Math.floor(issuedAt.getTime() / 1000) + UPLOAD_POLICY_TTL_SECONDS + UPLOAD_POLICY_GRACE_SECONDS;
}

/** The metadata field that ties a stored object to its upload record. */
export const FILE_ID_FIELD = 'x-amz-meta-file-id';

export interface UploadPolicy {
  /** Where to POST the form. */
  url: string;
  /** Every field to send, exactly as given, before the `file` part. */
  fields: Record<string, string>;
}

/**
 * Uploads rule 6: the same one object put directly by a storage client, as a presigned PUT. The
 * content type, byte length, file id and `unconfirmed` tag are signed as headers the client must
 * send exactly as given, so S3 refuses any other file as it does for the form post.
 */
export interface DirectPut {
  method: 'PUT';
  url: string;
  headers: Record<string, string>;
}

/**
 * A presigned POST for exactly one object: the bucket, the exact key, the exact byte length
 * (`content-length-range` from `filesize` to `filesize`), the exact `Content-Type`, the file id
 * metadata and the `unconfirmed` tag are all signed, so storage refuses any other file, type or
 * destination (Uploads rules 1 and 3). A file not served inline (`servingOf`: HTML, SVG, text…) is
 * also stored with `Content-Disposition: attachment`, signed the same way, so even a GET that does
 * not name a disposition downloads it (the URLs the API hands out name one anyway).
 */
export async function createUploadPolicy(input: {
  key: string;
  contentType: string;
  filesize: number;
  fileId: string;
}): Promise<UploadPolicy & { expiresAt: Date; directPut: DirectPut }> {
  const expiresAt = new Date(Date.now() + UPLOAD_POLICY_TTL_SECONDS * 1000);
  const bucket = bucketName();
  const disposition = servingOf(input.contentType).disposition === 'attachment' ? 'attachment' : undefined;
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
      ...(disposition ? [['eq', '$Content-Disposition', disposition] as ['eq', string, string]] : []),
    ],
    Fields: {
      'Content-Type': input.contentType,
      ...(disposition ? { 'Content-Disposition': disposition } : {}),
      [FILE_ID_FIELD]: input.fileId,
      tagging: UNCONFIRMED_TAGGING,
    },
    Expires: UPLOAD_POLICY_TTL_SECONDS,
  });
  const headers = {
    'Content-Type': input.contentType,
    'Content-Length': String(input.filesize),
    ...(disposition ? { 'Content-Disposition': disposition } : {}),
    [FILE_ID_FIELD]: input.fileId,
    'x-amz-tagging': `${UPLOAD_STATE_TAG}=unconfirmed`,
  };
  const putUrl = await getSignedUrl(
    getS3(),
    new PutObjectCommand({
      Bucket: bucket,
      Key: input.key,
      ContentType: input.contentType,
      ContentLength: input.filesize,
      ...(disposition ? { ContentDisposition: disposition } : {}),
      Metadata: { 'file-id': input.fileId },
      Tagging: `${UPLOAD_STATE_TAG}=unconfirmed`,
    }),
    {
      expiresIn: UPLOAD_POLICY_TTL_SECONDS,
      signableHeaders: new Set(['content-type', 'content-length', 'content-disposition']),
      unhoistableHeaders: new Set([FILE_ID_FIELD, 'x-amz-tagging']),
    },
  );
  return { url: post.url, fields: post.fields, expiresAt, directPut: { method: 'PUT', url: putUrl, headers } };
}
