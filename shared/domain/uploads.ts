import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { getPlan, type Plan } from '../db/plans.js';
import { getStorageBreakdown, type StorageCategory } from '../db/storage.js';
import {
  confirmUpload,
  getUpload,
  recordIssuedUpload,
  UPLOAD_RECORD_TTL_SECONDS,
  uploadObjectKey,
  type UploadRecord,
  type UploadResourceType,
} from '../db/uploads.js';
import type { Role } from '../db/users.js';
import type { WorkspaceRecord } from '../db/workspaces.js';
import { BadRequestError, ConflictError, ForbiddenError, InvalidInputError, NotFoundError, PaymentRequiredError } from '../http/errors.js';
import { logger } from '../logger.js';
import { baseMimeType, fileTypeOf, isDisplayableImage, SUPPORTED_EXTENSIONS } from '../storage/file-types.js';
import { IMAGE_HEADER_BYTES, imageSize, type ImageSize } from '../storage/image-size.js';
import { bucketName, headObject, readObjectStart, tagObjectConfirmed, type StoredObject } from '../storage/objects.js';
import { createUploadPolicy, type DirectPut, type UploadPolicy } from '../storage/upload-policy.js';
import { loadFolderForCaller, requireItemRole } from './items.js';
import { loadMarkup } from './markups.js';
import { roleOf } from './roles.js';
import { resolveWorkspace } from './scope.js';

// ---------------------------------------------------------------------------------------------
// Storage quota
// ---------------------------------------------------------------------------------------------

/**
 * 402 unless the organization can store `additionalBytes` more without passing its plan's storage
 * limit (`storageLimitBytes`; null is unlimited). Bytes already counted (confirmed uploads) are in
 * the breakdown, so `additionalBytes` is 0 when checking files that are stored already.
 */
export async function requireStorageFor(plan: Plan, additionalBytes: number, what: string): Promise<void> {
  const limit = plan.storageLimitBytes;
  if (limit === null) return;
  const { total } = await getStorageBreakdown(plan.organizationId);
  if (total + additionalBytes > limit) {
    const remaining = Math.max(0, limit - total);
    throw new PaymentRequiredError(
      `${what} does not fit the plan's storage: the organization stores ${total} of ${limit} bytes (${remaining} left)` +
        (additionalBytes > 0 ? ` and this needs ${additionalBytes}.` : '.'),
      'storage-limit-reached',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// What `resourceId` names, per resource type, and who may upload for it
// ---------------------------------------------------------------------------------------------

type ResourceKind = 'folder' | 'markup' | 'self' | 'external-user' | 'workspace';

interface ResourceRule {
  /** What `resourceId` is. */
  resource: ResourceKind;
  /** The least role in the resource's workspace. */
  role: Role;
  /** Content types accepted: any, displayable images only, or types a markup can be made from. */
  accepts: 'any' | 'image' | 'markup-file';
}

/**
 * Per resource type (Uploads: "constraints and access are checked per resource"). Folder types
 * name the destination folder; comment-related types name the markup they belong to (threads and
 * messages hang off markups, so the markup is what the caller must reach); avatars name their user;
 * the icon names its workspace.
 */
export const RESOURCE_RULES: Record<UploadResourceType, ResourceRule> = {
  markup_asset: { resource: 'folder', role: 'contributor', accepts: 'markup-file' },
  project_original: { resource: 'folder', role: 'contributor', accepts: 'any' },
  project_image: { resource: 'folder', role: 'contributor', accepts: 'image' },
  message_attachment: { resource: 'markup', role: 'contributor', accepts: 'any' },
  thread_screenshot: { resource: 'markup', role: 'contributor', accepts: 'image' },
  thread_snapshot: { resource: 'markup', role: 'contributor', accepts: 'any' },
  annotation_export: { resource: 'markup', role: 'contributor', accepts: 'any' },
  user_avatar: { resource: 'self', role: 'viewer', accepts: 'image' },
  external_user_avatar: { resource: 'external-user', role: 'contributor', accepts: 'image' },
  workspace_icon: { resource: 'workspace', role: 'admin', accepts: 'image' },
};

/** Resource types whose files markups are made from (their resourceId is a destination folder). */
export const MARKUP_SOURCE_TYPES: ReadonlySet<UploadResourceType> = new Set(['markup_asset', 'project_original', 'project_image']);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function requireUuid(resourceType: UploadResourceType, resourceId: string, what: string): void {
  if (!UUID.test(resourceId)) {
    throw new InvalidInputError([{ field: 'resourceId', detail: `must be ${what} (a UUID) for ${resourceType}` }]);
  }
}

/** The workspace an upload goes into, for the caller. */
async function resolveUploadWorkspace(
  principal: Principal,
  resourceType: UploadResourceType,
  resourceId: string,
  workspaceId: string | undefined,
): Promise<{ workspace: WorkspaceRecord; role: Role }> {
  const rule = RESOURCE_RULES[resourceType];
  let workspace: WorkspaceRecord;
  let role: Role;
  switch (rule.resource) {
    case 'folder': {
      requireUuid(resourceType, resourceId, 'the destination folder id');
      ({ workspace, role } = await loadFolderForCaller(principal, resourceId));
      break;
    }
    case 'markup': {
      requireUuid(resourceType, resourceId, 'the id of the markup it belongs to');
      ({ workspace, role } = await loadMarkup(principal, resourceId));
      break;
    }
    case 'self': {
      if (resourceId !== principal.userId) {
        throw new ForbiddenError(`A ${resourceType} upload is for the caller's own user: resourceId must be ${principal.userId}.`, 'not-own-user');
      }
      workspace = await resolveWorkspace(principal, workspaceId, { useDefault: true });
      role = await roleOf(principal, workspace.id);
      break;
    }
    case 'external-user': {
      if (resourceId.trim() === '' || resourceId.length > 255) {
        throw new InvalidInputError([{ field: 'resourceId', detail: `must be the external user's id (1 to 255 characters) for ${resourceType}` }]);
      }
      workspace = await resolveWorkspace(principal, workspaceId, { useDefault: true });
      role = await roleOf(principal, workspace.id);
      break;
    }
    case 'workspace': {
      requireUuid(resourceType, resourceId, 'the workspace id');
      workspace = await resolveWorkspace(principal, resourceId);
      role = await roleOf(principal, workspace.id);
      break;
    }
  }
  if (workspaceId !== undefined && workspaceId !== workspace.id) {
    throw new BadRequestError(`workspaceId ${workspaceId} is not the workspace of resourceId ${resourceId} (${workspace.id}).`, 'workspace-mismatch');
  }
  requireItemRole({ role }, rule.role, `upload ${resourceType} files`);
  return { workspace, role };
}

function requireAcceptedType(resourceType: UploadResourceType, contentType: string, filename: string): void {
  const { accepts } = RESOURCE_RULES[resourceType];
  if (accepts === 'image' && !isDisplayableImage(contentType, filename)) {
    throw new BadRequestError(`A ${resourceType} must be a PNG, JPEG, GIF, BMP, WebP or SVG image; ${contentType} is not.`, 'unsupported-file-type');
  }
  if (accepts === 'markup-file' && !fileTypeOf(contentType, filename)) {
    throw new BadRequestError(
      `No markup can be made from a ${contentType} file named "${filename}". Supported: images (png, jpeg, gif, bmp, webp, svg), ` +
        `PDF, videos (mp4, mov, webm, avi, wmv, mkv, mxf) and tiff, psd, eps (${SUPPORTED_EXTENSIONS.length} extensions).`,
      'unsupported-file-type',
    );
  }
}

/**
 * The name part of an object key: no path separators or control characters (they would change the
 * key's shape or break URLs), no `${` (S3 POST substitutes `${filename}`), at most 200 characters
 * with the extension kept.
 */
export function objectNameOf(filename: string): string {
  let name = filename
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f/\\]/g, '_')
    .replaceAll('${', '_{')
    .trim();
  if (/^\.*$/.test(name)) name = 'file';
  if (name.length <= 200) return name;
  const extension = /\.[^.]{1,16}$/.exec(name)?.[0] ?? '';
  return name.slice(0, 200 - extension.length) + extension;
}

/** Where the bytes of a file are counted (Workspace storage breakdown). */
export function storageCategoryOf(resourceType: UploadResourceType, contentType: string, filename: string): StorageCategory {
  if (resourceType === 'message_attachment') return 'attachments';
  const mime = baseMimeType(contentType);
  if (mime === 'application/pdf') return 'pdfs';
  if (mime.startsWith('video/')) return 'videos';
  if (mime.startsWith('image/')) return 'images';
  switch (fileTypeOf(contentType, filename)?.kind) {
    case 'pdf':
      return 'pdfs';
    case 'video':
      return 'videos';
    case 'image':
    case 'convertible-image':
      return 'images';
    default:
      return 'attachments';
  }
}

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

export interface IssuedUpload {
  fileId: string;
  key: string;
  bucket: string;
  acl: 'private';
  policy: UploadPolicy;
  /** Uploads rule 6: the alternative to the form post for a storage client. */
  directPut: DirectPut;
  metadata: Record<string, string | number>;
}

/** S3 accepts at most 5 GiB in one POST. */
export const MAX_POST_BYTES = 5 * 1024 ** 3;

/**
 * Issues a presigned POST for one file (States and transitions: "Uploaded file: none"): checks the
 * caller may upload for the resource, that the type suits it, and that the declared size fits the
 * plan's remaining storage (402 otherwise, before anything is issued); then records the upload as
 * `issued` and signs a policy for exactly that key, size and type.
 */
export async function issueUploadPolicy(principal: Principal, input: UploadPolicyInput): Promise<IssuedUpload> {
  const { workspace } = await resolveUploadWorkspace(principal, input.resourceType, input.resourceId, input.workspaceId);
  requireAcceptedType(input.resourceType, input.contentType, input.filename);
  const plan = await getPlan(workspace.organizationId);
  await requireStorageFor(plan, input.filesize, `A file of ${input.filesize} bytes`);
  if (input.filesize > MAX_POST_BYTES) {
    throw new BadRequestError(`Storage accepts at most ${MAX_POST_BYTES} bytes in one upload; this file has ${input.filesize}.`, 'file-too-large');
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
  };
  // Only a client-chosen id can be taken: the record is created only if none has that id.
  if (!(await recordIssuedUpload(record))) {
    throw new ConflictError(`File id ${fileId} is already used by another upload; choose another fileId or leave it out.`);
  }
  const { expiresAt, directPut, ...policy } = await createUploadPolicy({ key, contentType: input.contentType, filesize: input.filesize, fileId });
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
export function describeUpload(record: UploadRecord): Record<string, unknown> {
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

/** 404 for unknown file ids, 403 for another organization's or (workspace keys) another workspace's. */
export async function loadUploadForCaller(principal: Principal, fileId: string): Promise<UploadRecord> {
  const record = await getUpload(fileId);
  if (!record) throw new NotFoundError(`Upload ${fileId} does not exist (or its policy expired unconfirmed).`);
  if (record.organizationId !== principal.organizationId || (principal.scope === 'workspace' && record.workspaceId !== principal.workspaceId)) {
    throw new ForbiddenError(`Upload ${fileId} was made into another workspace than this API key's.`, 'file-in-another-workspace');
  }
  return record;
}

/** An ETag without the quotes storage puts around it, for comparing ETags however a client sent them. */
export const unquoted = (etag: string) => etag.trim().replace(/^"(.*)"$/, '$1');

/** Why a stored object does not match the upload's policy, or undefined when it does. */
function mismatchOf(record: UploadRecord, object: StoredObject, etag: string): string | undefined {
  if (object.size !== record.filesize) return `the stored object has ${object.size} bytes, the policy ${record.filesize}`;
  // Storage enforced the exact type at the post; compare the media types only, as some stores add parameters.
  if (baseMimeType(object.contentType ?? '') !== baseMimeType(record.contentType)) return `the stored object's type is ${object.contentType ?? 'none'}, the policy's ${record.contentType}`;
  if (unquoted(object.etag) !== unquoted(etag)) return `etag ${etag} is not the stored object's ETag (${object.etag}); send the ETag storage answered`;
  return undefined;
}

async function dimensionsOf(record: UploadRecord): Promise<ImageSize | undefined> {
  if (!isDisplayableImage(record.contentType, record.filename)) return undefined;
  try {
    const head = await readObjectStart(record.key, IMAGE_HEADER_BYTES);
    return head ? imageSize(head) : undefined;
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
export async function completeUpload(principal: Principal, input: { fileId: string; etag: string }): Promise<Record<string, unknown>> {
  const record = await loadUploadForCaller(principal, input.fileId);
  if (record.state !== 'issued') return confirmedAnswer(record, input.etag);
  if (record.expiresAtEpoch !== undefined && record.expiresAtEpoch * 1000 <= Date.now()) {
    throw new BadRequestError(`The policy of upload ${record.fileId} expired before it was confirmed; request a new upload policy.`, 'upload-expired');
  }

  const notified: StoredObject | undefined =
    record.landedSize !== undefined && record.landedEtag !== undefined
      ? { size: record.landedSize, etag: record.landedEtag, contentType: record.landedContentType ?? undefined }
      : undefined;
  const object = notified && !mismatchOf(record, notified, input.etag) ? notified : await headObject(record.key);
  if (!object) {
    throw new BadRequestError(`The file of upload ${record.fileId} has not landed in storage yet: post it to policy.url first (or retry in a moment).`, 'upload-not-landed');
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
    throw new BadRequestError(`The policy of upload ${record.fileId} expired before it was confirmed; request a new upload policy.`, 'upload-expired');
  }
  return describeUpload({ ...record, state: 'confirmed', confirmedAt: at, etag: object.etag, category, ...size });
}

function confirmedAnswer(record: UploadRecord, etag: string): Record<string, unknown> {
  if (record.etag !== undefined && unquoted(record.etag) !== unquoted(etag)) {
    throw new BadRequestError(`Upload ${record.fileId} was confirmed with ETag ${record.etag}, not ${etag}.`, 'upload-mismatch');
  }
  return describeUpload(record);
}
