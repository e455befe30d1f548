import * as v from 'valibot';
import { ORIGINAL_FILE_STORAGE_POLICIES, STORAGE_CATEGORIES } from '../../shared/schemas/workspaces.js';
import { SLUG_MAX_LENGTH, SLUG_PATTERN } from '../../shared/domain/workspaces/slugs.js';
import { Cursor, Id, Name, pageSchema, queryInteger, WorkspaceIdInput } from '../../shared/http/schemas.js';

/** Response shapes, for the OpenAPI document. */
export const WorkspaceSchema = v.object({
  id: Id,
  name: v.string(),
  rootFolderId: Id,
  archiveFolderId: Id,
  slug: v.string(),
});

export const StoragePolicySchema = v.picklist(ORIGINAL_FILE_STORAGE_POLICIES);

export const SettingsSchema = v.object({
  originalFileStoragePolicy: StoragePolicySchema,
  appliedToExistingCount: v.optional(v.number()),
  /** The archive job applying NEVER_STORE to existing originals. */
  jobId: v.optional(Id),
});

export const StorageBreakdownSchema = v.object(
  Object.fromEntries([...STORAGE_CATEGORIES, 'total'].map((name) => [name, v.number()])) as Record<
    (typeof STORAGE_CATEGORIES)[number] | 'total',
    v.NumberSchema<undefined>
  >,
);

export const WorkspaceQuery = WorkspaceIdInput;

export const WorkspaceListSchema = pageSchema(WorkspaceSchema);

export const ArchivedCountSchema = v.object({ archivedCount: v.number(), jobId: Id });

/** Workspaces rule 1: name ascending by default, 50 a page. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export const ListWorkspacesQuery = v.object({
  sortBy: v.optional(v.picklist(['name', 'lastActivity'], 'must be name or lastActivity'), 'name'),
  dir: v.optional(v.picklist(['asc', 'desc'], 'must be asc or desc')),
  limit: v.optional(queryInteger(1, MAX_PAGE_SIZE)),
  before: v.optional(Cursor),
  since: v.optional(Cursor),
});

export const UpdateSettingsBody = v.object({
  originalFileStoragePolicy: v.optional(StoragePolicySchema),
  applyToExisting: v.optional(v.boolean()),
  workspaceId: v.optional(Id),
});

const Slug = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(SLUG_MAX_LENGTH, `must be at most ${SLUG_MAX_LENGTH} characters`),
  v.regex(SLUG_PATTERN, 'must be lowercase letters and digits in hyphen-separated words'),
);

export const UpdateWorkspaceBody = v.pipe(
  v.object({ name: v.optional(Name), slug: v.optional(Slug), workspaceId: v.optional(Id) }),
  v.check((body) => body.name !== undefined || body.slug !== undefined, 'name or slug is required'),
);
