import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { isConditionFailure } from './errors.js';

/**
 * Uploaded files. Object keys are `uploads/<workspaceId>/<fileId>/<filename>`, so the S3
 * notification alone names the file record it confirms.
 */
export const uploadKey = (fileId: string) => ({ PK: `UPLOAD#${fileId}`, SK: 'UPLOAD' });

/** Objects under this prefix are uploads; the bucket notification filters on it. */
export const UPLOAD_PREFIX = 'uploads/';

const KEY_PATTERN = /^uploads\/([0-9a-f-]{36})\/([0-9a-f-]{36})\/.+$/;

export function uploadObjectKey(workspaceId: string, fileId: string, filename: string): string {
  return `uploads/${workspaceId}/${fileId}/${filename}`;
}

export function parseUploadObjectKey(key: string): { workspaceId: string; fileId: string } | undefined {
  const match = KEY_PATTERN.exec(key);
  return match ? { workspaceId: match[1]!, fileId: match[2]! } : undefined;
}

export interface LandedObject {
  size: number;
  etag: string;
  contentType: string | undefined;
  at: string;
}

/**
 * Records that the object of an issued upload policy landed in storage. Returns false when no policy
 * was issued for it. Replays of the same notification rewrite the same values (idempotent).
 */
export async function recordLanded(fileId: string, landed: LandedObject): Promise<boolean> {
  try {
    await getDb().send(
      new UpdateCommand({
        TableName: getConfig().tableName,
        Key: uploadKey(fileId),
        UpdateExpression: 'SET landedAt = if_not_exists(landedAt, :at), landedSize = :size, landedEtag = :etag, landedContentType = :type',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':at': landed.at, ':size': landed.size, ':etag': landed.etag, ':type': landed.contentType ?? null },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
