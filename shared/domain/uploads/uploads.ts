import { randomUUID } from 'node:crypto';
import { authorize, inScope } from '../../auth/authorize.js';
import type { Principal } from '../../auth/principal.js';
import { getPlan } from '../../db/plans.js';
import {
  confirmUpload,
  getUpload,
  parseUploadObjectKey,
  recordLanded,
  UPLOAD_RECORD_TTL_SECONDS,
  uploadObjectKey,
  type UploadRecord,
  type UploadResourceType,
} from '../../db/uploads.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../errors.js';
import { logger } from '../../logger.js';
import { recordMetrics } from '../../metrics.js';
import { baseMimeType, fileTypeOf } from '../../storage/file-types.js';
import { IMAGE_HEADER_BYTES, readImageAs, type ImageSize } from '../../storage/image-size.js';
import { bucketName, headObject, readObjectStart, tagObjectConfirmed, type StoredObject } from '../../storage/objects.js';
import { createUploadPolicy, policyUsableUntilEpoch } from '../../storage/upload-policy.js';
import type { UploadedFileView, UploadPolicyView } from '../../schemas/uploads.js';
import {
  issueWithReservation,
  objectNameOf,
  requireAcceptedType,
  requireStorageFor,
  resolveUploadWorkspace,
  RESOURCE_RULES,
  storageCategoryOf,
} from './rules.js';

// ---------------------------------------------------------------------------------------------
// POST /uploads/upload-policy
// ---------------------------------------------------------------------------------------------

export interface UploadPolicyInput {
  resourceType: UploadResourceType;
  resourceId: string;
  filename: string;
  contentType: string;
  filesize: number;
  /** Organization keys may name the workspace of user and external-user avatars (default: their default workspace). */
  workspaceId?: string;
  /** A file id the client chose (a UUID no upload has used: 409 otherwise); by default a new one. */
  fileId?: string;
}

/** S3 accepts at most 5 GiB in one POST. */
export const MAX_POST_BYTES = 5 * 1024 ** 3;

/**
 * Issues a presigned POST for one file (States and transitions: "Uploaded file: none"): checks the
 * caller may upload for the resource and that the type suits it; then records the upload as
 * `issued`, reserving its declared size under the plan's storage limit (402 when it does not fit,
 * before anything is issued), and signs a policy for exactly that key, size and type.
 */
export async function issueUploadPolicy(principal: Principal, input: UploadPolicyInput): Promise<UploadPolicyView> {
  const { workspace } = await resolveUploadWorkspace(principal, input.resourceType, input.resourceId, input.workspaceId);
  requireAcceptedType(input.resourceType, input.contentType, input.filename);
  const plan = await getPlan(workspace.organizationId);
  if (plan.storageLimitBytes !== null && input.filesize > plan.storageLimitBytes) {
    await requireStorageFor(plan, input.filesize, `A file of ${input.filesize} bytes`);
  }
  if (input.filesize > MAX_POST_BYTES) {
    throw new BadRequestError(
      `Storage accepts at most ${MAX_POST_BYTES} bytes in one upload; this file has ${input.filesize}.`,
      'file-too-large',
    );
  }

  const fileId = input.fileId ?? randomUUID();
  const key = uploadObjectKey(workspace.id, fileId, objectNameOf(input.filename));
  const now = new Date();
  const record: UploadRecord = {
    fileId,
    workspaceId: workspace.id,
    organizationId: workspace.organizationId,
    resourceType: input.resourceType,
    resourceId: input.resourceId,
    key,
    filename: input.filename,
    contentType: input.contentType,
    filesize: input.filesize,
    state: 'issued',
    uploadedBy: principal.userId,
    createdAt: now.toISOString(),
    expiresAtEpoch: Math.floor(now.getTime() / 1000) + UPLOAD_RECORD_TTL_SECONDS,
    reservedBytes: input.filesize,
    // Until the policy can no longer be used, not the record's day: an unused policy must not hold the bytes.
    reservedUntilEpoch: policyUsableUntilEpoch(now),
  };
  // Only a client-chosen id can be taken: the record is created only if none has that id.
  await issueWithReservation(plan, record, `A file of ${input.filesize} bytes`);
  const { expiresAt, directPut, ...policy } = await createUploadPolicy({
    key,
    contentType: input.contentType,
    filesize: input.filesize,
    fileId,
  });
  return {
    fileId,
    key,
    bucket: bucketName(),
    acl: 'private',
    policy,
    directPut,
    metadata: {
      fileId,
      resourceType: input.resourceType,
      resourceId: input.resourceId,
      workspaceId: workspace.id,
      filename: input.filename,
      contentType: input.contentType,
      filesize: input.filesize,
      expiresAt: expiresAt.toISOString(),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// POST /uploads/upload-complete
// ---------------------------------------------------------------------------------------------

/**
 * The answer of upload-complete, the same for every resource type: the spec's markup_asset fields
 * (`id`, `key`, `mimeType`, `filesize`, `originalFilename`), what the file is for, and its pixel
 * size when it is an image whose header could be read.
 */
export function describeUpload(record: UploadRecord): UploadedFileView {
  return {
    id: record.fileId,
    key: record.key,
    mimeType: record.contentType,
    filesize: record.filesize,
    originalFilename: record.filename,
    resourceType: record.resourceType,
    resourceId: record.resourceId,
    workspaceId: record.workspaceId,
    ...(record.width !== undefined && record.height !== undefined ? { width: record.width, height: record.height } : {}),
  };
}

/** 404 for unknown file ids, 403 for another organization's or (workspace keys) another workspace's, or below the route's permission. */
export async function loadUploadForCaller(principal: Principal, fileId: string): Promise<UploadRecord> {
  const record = await getUpload(fileId);
  if (!record) throw new NotFoundError(`Upload ${fileId} does not exist (or its policy expired unconfirmed).`);
  const workspace = { id: record.workspaceId, organizationId: record.organizationId };
  if (!inScope(principal, workspace)) {
    throw new ForbiddenError(`Upload ${fileId} was made into another workspace than this credential's.`, 'file-in-another-workspace');
  }
  // Uploads for a comment name their markup: an end user's token must reach it (a bound token, that one markup).
  const markupId = RESOURCE_RULES[record.resourceType].resource === 'markup' ? record.resourceId : undefined;
  await authorize(principal, workspace, { markupId });
  return record;
}

/** An ETag without the quotes storage puts around it, for comparing ETags however a client sent them. */
export const unquoted = (etag: string) => etag.trim().replace(/^"(.*)"$/, '$1');

/** Why a stored object does not match the upload's policy, or undefined when it does. */
function mismatchOf(record: UploadRecord, object: StoredObject, etag: string): string | undefined {
  if (object.size !== record.filesize) return `the stored object has ${object.size} bytes, the policy ${record.filesize}`;
  // Storage enforced the exact type at the post; compare the media types only, as some stores add parameters.
  if (baseMimeType(object.contentType ?? '') !== baseMimeType(record.contentType))
    return `the stored object's type is ${object.contentType ?? 'none'}, the policy's ${record.contentType}`;
  if (unquoted(object.etag) !== unquoted(etag))
    return `etag ${etag} is not the stored object's ETag (${object.etag}); send the ETag storage answered`;
  return undefined;
}

/**
 * The pixel size of a displayable image, read as its declared type only: bytes that are not what
 * they claim get none, which is how a markup made from the upload knows to refuse it.
 */
async function dimensionsOf(record: UploadRecord): Promise<ImageSize | undefined> {
  const type = fileTypeOf(record.contentType, record.filename);
  if (type?.kind !== 'image') return undefined;
  try {
    const head = await readObjectStart(record.key, IMAGE_HEADER_BYTES);
    return head ? readImageAs(head, type.mimeType)?.size : undefined;
  } catch (error) {
    logger.warn('image size not read', { fileId: record.fileId, error });
    return undefined;
  }
}

/**
 * Confirms an upload (States and transitions: "policy issued" -> "confirmed"): the object must
 * have landed and match the policy (size, content type) and the ETag the client got from storage.
 * The S3 notification's record is used when it matches; otherwise storage is asked directly, which
 * also covers a notification that has not arrived yet. The object is retagged `confirmed` (out of
 * the lifecycle rule's reach) BEFORE the record changes, so a confirmed record never points at an
 * object about to expire. Completing again answers the same.
 */
export async function completeUpload(principal: Principal, input: { fileId: string; etag: string }): Promise<UploadedFileView> {
  const record = await loadUploadForCaller(principal, input.fileId);
  if (record.state !== 'issued') return confirmedAnswer(record, input.etag);
  if (record.expiresAtEpoch !== undefined && record.expiresAtEpoch * 1000 <= Date.now()) {
    throw new BadRequestError(
      `The policy of upload ${record.fileId} expired before it was confirmed; request a new upload policy.`,
      'upload-expired',
    );
  }

  const notified: StoredObject | undefined =
    record.landedSize !== undefined && record.landedEtag !== undefined
      ? { size: record.landedSize, etag: record.landedEtag, contentType: record.landedContentType ?? undefined }
      : undefined;
  const object = notified && !mismatchOf(record, notified, input.etag) ? notified : await headObject(record.key);
  if (!object) {
    throw new BadRequestError(
      `The file of upload ${record.fileId} has not landed in storage yet: post it to policy.url first (or retry in a moment).`,
      'upload-not-landed',
    );
  }
  const mismatch = mismatchOf(record, object, input.etag);
  if (mismatch) throw new BadRequestError(`Upload ${record.fileId} does not match its policy: ${mismatch}.`, 'upload-mismatch');

  await tagObjectConfirmed(record.key);
  const size = await dimensionsOf(record);
  const at = new Date().toISOString();
  const category = storageCategoryOf(record.resourceType, record.contentType, record.filename);
  if (!(await confirmUpload(record, { etag: object.etag, category, at, ...size }))) {
    // A concurrent completion won (same answer), or the record expired meanwhile.
    const current = await getUpload(record.fileId);
    if (current && current.state !== 'issued') return confirmedAnswer(current, input.etag);
    throw new BadRequestError(
      `The policy of upload ${record.fileId} expired before it was confirmed; request a new upload policy.`,
      'upload-expired',
    );
  }
  recordMetrics({ BytesConfirmed: record.filesize });
  return describeUpload({ ...record, state: 'confirmed', confirmedAt: at, etag: object.etag, category, ...size });
}

function confirmedAnswer(record: UploadRecord, etag: string): UploadedFileView {
  if (record.etag !== undefined && unquoted(record.etag) !== unquoted(etag)) {
    throw new BadRequestError(`Upload ${record.fileId} was confirmed with ETag ${record.etag}, not ${etag}.`, 'upload-mismatch');
  }
  return describeUpload(record);
}

// ---------------------------------------------------------------------------------------------
// upload-confirmed: S3's ObjectCreated notifications
// ---------------------------------------------------------------------------------------------

/** What a notification of one stored object came to, for the worker's log. */
export type LandedOutcome =
  { outcome: 'outside-prefix' } | { outcome: 'not-stored'; fileId: string } | { outcome: 'landed' | 'no-policy'; fileId: string };

/**
 * Records that an upload's object landed (size, ETag, content type, as storage says now), which
 * upload-complete then confirms. Objects outside the upload prefix, with no policy on record, or
 * gone by the time the notification is read (a redrive days later) are left alone. Safe to repeat.
 */
export async function recordUploadLanded(key: string, at: string): Promise<LandedOutcome> {
  const upload = parseUploadObjectKey(key);
  if (!upload) return { outcome: 'outside-prefix' };
  const stored = await headObject(key);
  if (!stored) return { outcome: 'not-stored', fileId: upload.fileId };
  return { outcome: (await recordLanded(upload.fileId, { ...stored, at })) ? 'landed' : 'no-policy', fileId: upload.fileId };
}
