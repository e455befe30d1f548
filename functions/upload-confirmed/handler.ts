import { HeadObjectCommand } from '@aws-sdk/client-s3';
import type { Context, S3Event } from 'aws-lambda';
import { getS3 } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { parseUploadObjectKey, recordLanded } from '../../shared/db/uploads.js';
import { logger } from '../../shared/logger.js';

getConfig();

/** S3 encodes keys in notifications like a form: `+` for space, `%XX` for the rest. */
export function decodeEventKey(key: string): string {
  return decodeURIComponent(key.replace(/\+/g, ' '));
}

/**
 * Runs on S3 ObjectCreated notifications of the upload bucket and records that an upload's object
 * landed (size, ETag, content type), which upload-complete then confirms. Objects outside the upload
 * prefix, or with no policy on record, are logged and left alone.
 */
export async function handler(event: S3Event, context?: Context): Promise<void> {
  if (context) logger.addContext(context);
  for (const record of event.Records) {
    const bucket = record.s3.bucket.name;
    const key = decodeEventKey(record.s3.object.key);
    const upload = parseUploadObjectKey(key);
    if (!upload) {
      logger.warn('object outside the upload prefix', { bucket, key });
      continue;
    }
    const head = await getS3().send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    const recorded = await recordLanded(upload.fileId, {
      size: head.ContentLength ?? record.s3.object.size,
      etag: head.ETag ?? `"${record.s3.object.eTag}"`,
      contentType: head.ContentType,
      at: record.eventTime,
    });
    logger.info(recorded ? 'upload landed' : 'object without an upload policy', { bucket, key, fileId: upload.fileId });
  }
}
