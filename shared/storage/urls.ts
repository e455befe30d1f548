import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { getS3 } from '../clients.js';
import { getConfig } from '../config.js';
import { contentDispositionOf, servingOf } from './serving.js';

/** Lifetime of file URLs when a request names none (`ttl`), and the longest S3 allows. */
export const DEFAULT_URL_TTL_SECONDS = 3600;
export const MAX_URL_TTL_SECONDS = 7 * 24 * 3600;

/**
 * A short-lived, presigned GET URL for a stored object: a plain unauthenticated GET returns the
 * bytes exactly as stored, served as `servingOf(contentType)` decides from the file's recorded type
 * (DESIGN.md, "Files are served so they cannot script"): the URL signs `response-content-type` and
 * `response-content-disposition`, so what the object was stored with never decides how a browser
 * treats it. `filename` names an attachment's download; `downloadAs` makes any file a download
 * under that name.
 */
export async function presignedGetUrl(
  key: string,
  options: { contentType: string; ttlSeconds?: number; filename?: string; downloadAs?: string },
): Promise<string> {
  const serving = servingOf(options.contentType);
  const disposition = options.downloadAs
    ? contentDispositionOf('attachment', options.downloadAs)
    : contentDispositionOf(serving.disposition, serving.disposition === 'attachment' ? options.filename : undefined);
  const command = new GetObjectCommand({
    Bucket: getConfig().bucketName,
    Key: key,
    ResponseContentType: serving.contentType,
    ResponseContentDisposition: disposition,
  });
  return getSignedUrl(getS3(), command, { expiresIn: Math.min(options.ttlSeconds ?? DEFAULT_URL_TTL_SECONDS, MAX_URL_TTL_SECONDS) });
}
