import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { getS3 } from '../clients.js';
import { getConfig } from '../config.js';

/** Lifetime of file URLs when a request names none (`ttl`), and the longest S3 allows. */
export const DEFAULT_URL_TTL_SECONDS = 3600;
export const MAX_URL_TTL_SECONDS = 7 * 24 * 3600;

/**
 * A short-lived, presigned GET URL for a stored object: a plain unauthenticated GET returns the
 * bytes exactly as stored. `downloadAs` makes browsers save it under that name.
 */
export async function presignedGetUrl(key: string, options: { ttlSeconds?: number; downloadAs?: string } = {}): Promise<string> {
  const command = new GetObjectCommand({
    Bucket: getConfig().bucketName,
    Key: key,
    ...(options.downloadAs ? { ResponseContentDisposition: `attachment; filename*=UTF-8''${encodeURIComponent(options.downloadAs)}` } : {}),
  });
  return getSignedUrl(getS3(), command, { expiresIn: Math.min(options.ttlSeconds ?? DEFAULT_URL_TTL_SECONDS, MAX_URL_TTL_SECONDS) });
}
