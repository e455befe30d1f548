import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { AGAIN, withBackoff } from './core/backoff.js';
import { isTransactionConflict } from './core/errors.js';
import { endReservationItems, reserveItems, type Reservation } from './reservations.js';
import { storageDelta, type StorageCategory } from './storage.js';
import { UPLOAD_RESOURCE_TYPES } from '../schemas/uploads.js';
import { batchGet, putNew, transactUnlessConditionFails, tryTransact, updateIfConditionHolds, type TransactItem } from './core/transact.js';

/**
 * Uploaded files. Object keys are `uploads/<workspaceId>/<fileId>/<filename>`, so the S3
 * notification alone names the file record it confirms.
 *
 * Life of a record: `issued` (policy handed out and its size reserved, see reservations.ts, until the
 * policy can no longer be used or, once the object landed, until the record expires; expires with
 * the table's TTL a day later, the bucket's lifecycle rule removes the object of a policy never
 * confirmed and a sweep gives the reservation back, reservation-sweep.ts), `confirmed` (upload-complete saw the object
 * match; the reservation became stored bytes and the TTL is gone), `consumed` (a markup was made
 * from it, in the markup's own transaction; final).
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

export { UPLOAD_RESOURCE_TYPES };
export type UploadResourceType = (typeof UPLOAD_RESOURCE_TYPES)[number];

export type UploadState = 'issued' | 'confirmed' | 'consumed';

/** An issued policy is good for a day; after that the record is gone and its object is swept. */
export const UPLOAD_RECORD_TTL_SECONDS = 24 * 3600;

export interface UploadRecord {
  fileId: string;
  workspaceId: string;
  organizationId: string;
  resourceType: UploadResourceType;
  /** What `resourceType` says it is for: a folder, markup, user, external user or workspace id. */
  resourceId: string;
  key: string;
  /** The file name as the client gave it (the object key carries a sanitised copy). */
  filename: string;
  /** Signed into the policy; storage refuses any other. */
  contentType: string;
  /** Exact byte length, signed into the policy. */
  filesize: number;
  state: UploadState;
  uploadedBy: string;
  createdAt: string;
  /** TTL (epoch seconds) while `issued`; removed on confirmation. */
  expiresAtEpoch?: number;
  /** Bytes reserved on the organization's counters when the policy was issued (absent on records older than reservations). */
  reservedBytes?: number;
  /**
   * When the reservation ends (its key): the policy's usable end, moved to `expiresAtEpoch` by the
   * sweep once the object landed. Absent on older records, whose reservation ends at `expiresAtEpoch`.
   */
  reservedUntilEpoch?: number;
  /** Written by the S3 notification (upload-confirmed). */
  landedAt?: string;
  landedSize?: number;
  landedEtag?: string;
  landedContentType?: string | null;
  confirmedAt?: string;
  /** The object's ETag (with quotes) as confirmed. */
  etag?: string;
  /** The storage counter the bytes were added to on confirmation. */
  category?: StorageCategory;
  /** Pixel size of image uploads, when it could be read from the file's header. */
  width?: number;
  height?: number;
  consumedAt?: string;
  /** The markup made from this file. */
  consumedBy?: string;
}

export function toUploadItem(record: UploadRecord): Record<string, unknown> {
  return { ...uploadKey(record.fileId), entity: 'Upload', ...record };
}

const INTERNAL = new Set(['PK', 'SK', 'entity']);

function fromUploadItem(item: Record<string, unknown>): UploadRecord {
  return Object.fromEntries(Object.entries(item).filter(([name]) => !INTERNAL.has(name))) as unknown as UploadRecord;
}

/** True when an item read from the table is a complete upload record (the notification never creates one). */
function isUploadItem(item: Record<string, unknown> | undefined): item is Record<string, unknown> {
  return item?.entity === 'Upload' && typeof item.state === 'string';
}

/** The reservation an issued upload holds, if it was issued with one. */
export function reservationOf(record: UploadRecord): Reservation | undefined {
  if (record.reservedBytes === undefined || record.expiresAtEpoch === undefined) return undefined;
  return {
    organizationId: record.organizationId,
    fileId: record.fileId,
    bytes: record.reservedBytes,
    untilEpoch: record.reservedUntilEpoch ?? record.expiresAtEpoch,
  };
}

/**
 * Records an issued policy and reserves its size (`reservedBytes`), in one transaction: the record
 * is a conditional create (file ids are never reused) and the reservation requires room under
 * `limit` (null: unlimited). 'no-room' when the limit refused it, 'file-id-taken' when the id is
 * used, 'conflict' when another transaction held the counters (try again).
 */
export async function recordIssuedUpload(
  record: UploadRecord,
  limit: number | null,
): Promise<'issued' | 'file-id-taken' | 'no-room' | 'conflict'> {
  const reservation = reservationOf(record);
  if (!reservation) throw new Error('an issued upload needs reservedBytes and expiresAtEpoch');
  let failed: number[];
  try {
    failed = await tryTransact([putNew(toUploadItem(record)), ...reserveItems(reservation, limit)]);
  } catch (error) {
    if (isTransactionConflict(error)) return 'conflict';
    throw error;
  }
  if (failed.length === 0) return 'issued';
  return failed.includes(0) ? 'file-id-taken' : 'no-room';
}

export async function getUpload(fileId: string, consistent = true): Promise<UploadRecord | undefined> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: uploadKey(fileId), ConsistentRead: consistent }),
  );
  return isUploadItem(result.Item) ? fromUploadItem(result.Item) : undefined;
}

/** Upload records by file id (consistent reads, any number of ids), in no particular order. */
export async function getUploads(fileIds: readonly string[]): Promise<UploadRecord[]> {
  return (await batchGet(fileIds.map(uploadKey), { consistent: true })).filter(isUploadItem).map(fromUploadItem);
}

export interface Confirmation {
  etag: string;
  category: StorageCategory;
  at: string;
  width?: number;
  height?: number;
}

/**
 * Confirms an issued upload and counts its bytes, in one transaction: the record moves to
 * `confirmed` (only from `issued`, and only while its TTL has not passed) and loses its TTL, and its
 * reservation becomes the file's bytes under `category` (the reservation record must still exist).
 * Two concurrent confirmations of the same file, or a confirmation racing the sweep of an expired
 * reservation, count the bytes once: the loser's condition fails, and false is its answer. A sweep
 * that moved the reservation of a landed upload since `record` was read is followed (it moves once).
 */
export async function confirmUpload(record: UploadRecord, confirmation: Confirmation): Promise<boolean> {
  let current = record;
  return withBackoff(
    async (attempt) => {
      if ((await transactUnlessConditionFails(confirmUploadItems(current, confirmation))) === undefined) return true;
      const reread = await getUpload(record.fileId);
      if (!reread || reread.state !== 'issued' || reread.reservedUntilEpoch === current.reservedUntilEpoch) return false;
      current = reread;
      // Two writes in all: a reservation moves once.
      return attempt === 0 ? AGAIN : false;
    },
    { attempts: 2, baseMs: 0 },
  );
}

function confirmUploadItems(record: UploadRecord, confirmation: Confirmation): TransactItem[] {
  // The policy signs the exact size and confirmation checks it, so the reservation is the file's size.
  const reservation = reservationOf(record);
  const dimensions = confirmation.width !== undefined && confirmation.height !== undefined;
  return [
    {
      Update: {
        TableName: getConfig().tableName,
        Key: uploadKey(record.fileId),
        UpdateExpression: `SET #state = :confirmed, confirmedAt = :at, etag = :etag, category = :category${dimensions ? ', width = :width, height = :height' : ''} REMOVE expiresAtEpoch`,
        ConditionExpression: '#state = :issued AND expiresAtEpoch > :now',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':confirmed': 'confirmed',
          ':issued': 'issued',
          ':at': confirmation.at,
          ':etag': confirmation.etag,
          ':category': confirmation.category,
          ':now': Math.floor(Date.parse(confirmation.at) / 1000),
          ...(dimensions ? { ':width': confirmation.width, ':height': confirmation.height } : {}),
        },
      },
    },
    ...(reservation
      ? endReservationItems(reservation, { category: confirmation.category, bytes: record.filesize })
      : [{ Update: storageDelta(record.organizationId, confirmation.category, record.filesize) }]),
  ];
}

/**
 * Marks a confirmed upload as used by a markup. Goes into the markup's creation transaction, so a
 * file is consumed exactly once: of two concurrent creations naming it, one fails this condition.
 */
export function consumeUploadItem(fileId: string, markupId: string, at: string): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: uploadKey(fileId),
      UpdateExpression: 'SET #state = :consumed, consumedBy = :markup, consumedAt = :at',
      ConditionExpression: '#state = :confirmed',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':consumed': 'consumed', ':confirmed': 'confirmed', ':markup': markupId, ':at': at },
    },
  };
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
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: uploadKey(fileId),
    UpdateExpression: 'SET landedAt = if_not_exists(landedAt, :at), landedSize = :size, landedEtag = :etag, landedContentType = :type',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeValues: { ':at': landed.at, ':size': landed.size, ':etag': landed.etag, ':type': landed.contentType ?? null },
  });
}
