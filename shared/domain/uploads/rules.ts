import { authorize } from '../../auth/authorize.js';
import type { AnyRole, Permission } from '../../auth/permissions.js';
import type { Principal } from '../../auth/principal.js';
import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import type { Plan } from '../../db/plans.js';
import { releaseExpiredReservations } from '../../db/reservation-sweep.js';
import { getStorageCounters, repairClaimed, type StorageCategory, type StorageCounters } from '../../db/storage.js';
import { recordIssuedUpload, type UploadRecord, type UploadResourceType } from '../../db/uploads.js';
import type { WorkspaceRecord } from '../../db/workspaces.js';
import { BadRequestError, ConflictError, ForbiddenError, InvalidInputError, PaymentRequiredError } from '../../errors.js';
import { isId } from '../../schemas/builders.js';
import { baseMimeType, fileTypeOf, isDisplayableImage, SUPPORTED_EXTENSIONS } from '../../storage/file-types.js';
import { loadFolderForCaller } from '../items/access.js';
import { loadMarkup } from '../markups/access.js';
import { resolveWorkspace } from '../workspaces/scope.js';
import { withArticle } from '../../english.js';

/**
 * What an upload may be, checked before a policy is issued: the resource it is for and who may
 * upload for it, the types it accepts, the plan's storage; and how its object is named and counted.
 */

// ---------------------------------------------------------------------------------------------
// Storage quota
// ---------------------------------------------------------------------------------------------

/**
 * 402 unless the organization can claim `additionalBytes` more without passing its plan's storage
 * limit (`storageLimitBytes`; null is unlimited). Stored bytes and the reservations of uploads in
 * progress both count, so `additionalBytes` is 0 when checking files that are stored already. A
 * check before a write, for the message: the write itself must carry the limit (`counterUpdate`).
 */
export async function requireStorageFor(plan: Plan, additionalBytes: number, what: string): Promise<void> {
  const limit = plan.storageLimitBytes;
  if (limit === null) return;
  const counters = await getStorageCounters(plan.organizationId);
  if (counters.claimed + additionalBytes > limit) throw noRoomFor(limit, counters, additionalBytes, what);
}

function noRoomFor(limit: number, counters: StorageCounters, additionalBytes: number, what: string): PaymentRequiredError {
  const remaining = Math.max(0, limit - counters.claimed);
  const reserved = counters.reserved > 0 ? `, ${counters.reserved} reserved for uploads not yet confirmed` : '';
  return new PaymentRequiredError(
    `${what} does not fit the plan's storage: the organization stores ${counters.total} of ${limit} bytes${reserved} (${remaining} left)` +
      (additionalBytes > 0 ? ` and this needs ${additionalBytes}.` : '.'),
    'storage-limit-reached',
  );
}

/** How long issuing keeps retrying transactions that collide with concurrent uploads of the organization. */
const CONTENTION_BUDGET_MS = 8000;

/**
 * Records an issued upload and reserves its declared size in one transaction whose condition keeps
 * stored plus reserved bytes within the plan's limit, so concurrent policies can never promise more
 * than the plan holds (Uploads rule 2). When the limit refuses, reservations of policies that
 * expired unconfirmed are given back and the reservation is tried again; still no room is a 402.
 */
export async function issueWithReservation(plan: Plan, record: UploadRecord, what: string): Promise<void> {
  const limit = plan.storageLimitBytes;
  if (limit !== null && record.filesize > limit)
    throw noRoomFor(limit, await getStorageCounters(plan.organizationId), record.filesize, what);
  let swept = false;
  await withBackoff(
    async () => {
      const outcome = await recordIssuedUpload(record, limit);
      if (outcome === 'issued') return undefined;
      if (outcome === 'conflict') return AGAIN;
      if (outcome === 'file-id-taken')
        throw new ConflictError(`File id ${record.fileId} is already used by another upload; choose another fileId or leave it out.`);
      if (!swept) {
        // Tried again even when this sweep released nothing: a concurrent one may have released it.
        swept = true;
        await Promise.all([
          releaseExpiredReservations(plan.organizationId, Math.floor(Date.now() / 1000)),
          repairClaimed(plan.organizationId),
        ]);
        return AGAIN;
      }
      throw noRoomFor(limit!, await getStorageCounters(plan.organizationId), record.filesize, what);
    },
    {
      attempts: Number.POSITIVE_INFINITY,
      budgetMs: CONTENTION_BUDGET_MS,
      capMs: 200,
      exhausted: () => new ConflictError('Too many concurrent uploads in this organization; try again.'),
    },
  );
}

// ---------------------------------------------------------------------------------------------
// What `resourceId` names, per resource type, and who may upload for it
// ---------------------------------------------------------------------------------------------

type ResourceKind = 'folder' | 'markup' | 'self' | 'external-user' | 'workspace';

interface ResourceRule {
  /** What `resourceId` is. */
  resource: ResourceKind;
  /** The row of the permission table an upload for this resource needs, beside the route's (`upload:create`). */
  permission: Permission;
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
  markup_asset: { resource: 'folder', permission: 'markup:create', accepts: 'markup-file' },
  project_original: { resource: 'folder', permission: 'markup:create', accepts: 'any' },
  project_image: { resource: 'folder', permission: 'markup:create', accepts: 'image' },
  message_attachment: { resource: 'markup', permission: 'message:create', accepts: 'any' },
  thread_screenshot: { resource: 'markup', permission: 'thread:update', accepts: 'image' },
  thread_snapshot: { resource: 'markup', permission: 'thread:create', accepts: 'any' },
  annotation_export: { resource: 'markup', permission: 'thread:create', accepts: 'any' },
  user_avatar: { resource: 'self', permission: 'user:update-self', accepts: 'image' },
  external_user_avatar: { resource: 'external-user', permission: 'external-user:update', accepts: 'image' },
  workspace_icon: { resource: 'workspace', permission: 'workspace:update', accepts: 'image' },
};

/** Resource types whose files markups are made from (their resourceId is a destination folder). */
export const MARKUP_SOURCE_TYPES: ReadonlySet<UploadResourceType> = new Set(['markup_asset', 'project_original', 'project_image']);

function requireUuid(resourceType: UploadResourceType, resourceId: string, what: string): void {
  if (!isId(resourceId)) {
    throw new InvalidInputError([{ field: 'resourceId', detail: `must be ${what} (a UUID) for ${resourceType}` }]);
  }
}

/** The workspace an upload goes into, for the caller, authorized for the resource type's permission. */
export async function resolveUploadWorkspace(
  principal: Principal,
  resourceType: UploadResourceType,
  resourceId: string,
  workspaceId: string | undefined,
): Promise<{ workspace: WorkspaceRecord; role: AnyRole }> {
  const rule = RESOURCE_RULES[resourceType];
  const { permission } = rule;
  let workspace: WorkspaceRecord;
  let role: AnyRole;
  switch (rule.resource) {
    case 'folder': {
      requireUuid(resourceType, resourceId, 'the destination folder id');
      ({ workspace, role } = await loadFolderForCaller(principal, resourceId, { permission }));
      break;
    }
    case 'markup': {
      requireUuid(resourceType, resourceId, 'the id of the markup it belongs to');
      ({ workspace, role } = await loadMarkup(principal, resourceId, { permission }));
      break;
    }
    case 'self': {
      if (resourceId !== principal.userId) {
        throw new ForbiddenError(
          `${withArticle(resourceType, { capital: true })} upload is for the caller's own user: resourceId must be ${principal.userId}.`,
          'not-own-user',
        );
      }
      workspace = await resolveWorkspace(principal, workspaceId, { useDefault: true, permission });
      role = await authorize(principal, workspace, { permission });
      break;
    }
    case 'external-user': {
      if (resourceId.trim() === '' || resourceId.length > 255) {
        throw new InvalidInputError([
          { field: 'resourceId', detail: `must be the external user's id (1 to 255 characters) for ${resourceType}` },
        ]);
      }
      workspace = await resolveWorkspace(principal, workspaceId, { useDefault: true, permission });
      role = await authorize(principal, workspace, { permission });
      break;
    }
    case 'workspace': {
      requireUuid(resourceType, resourceId, 'the workspace id');
      workspace = await resolveWorkspace(principal, resourceId, { permission });
      role = await authorize(principal, workspace, { permission });
      break;
    }
  }
  if (workspaceId !== undefined && workspaceId !== workspace.id) {
    throw new BadRequestError(
      `workspaceId ${workspaceId} is not the workspace of resourceId ${resourceId} (${workspace.id}).`,
      'workspace-mismatch',
    );
  }
  return { workspace, role };
}

/** 400 unless the resource type accepts this file type (any, displayable images, or files markups are made from). */
export function requireAcceptedType(resourceType: UploadResourceType, contentType: string, filename: string): void {
  const { accepts } = RESOURCE_RULES[resourceType];
  if (accepts === 'image' && !isDisplayableImage(contentType, filename)) {
    throw new BadRequestError(
      `${withArticle(resourceType, { capital: true })} must be a PNG, JPEG, GIF, BMP, WebP or SVG image; ${contentType} is not.`,
      'unsupported-file-type',
    );
  }
  if (accepts === 'markup-file' && !fileTypeOf(contentType, filename)) {
    throw new BadRequestError(
      `No markup can be made from ${withArticle(contentType)} file named "${filename}". Supported: images (png, jpeg, gif, bmp, webp, svg), ` +
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
    // eslint-disable-next-line no-control-regex -- control characters are what this replaces, with separators
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
