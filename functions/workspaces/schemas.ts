import * as v from 'valibot';
import { ORIGINAL_FILE_STORAGE_POLICIES } from '../../shared/db/workspaces.js';
import { STORAGE_CATEGORIES } from '../../shared/db/storage.js';
import { Id } from '../../shared/http/schemas.js';

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
});

export const StorageBreakdownSchema = v.object(
  Object.fromEntries([...STORAGE_CATEGORIES, 'total'].map((name) => [name, v.number()])) as Record<
    (typeof STORAGE_CATEGORIES)[number] | 'total',
    v.NumberSchema<undefined>
  >,
);

export const WorkspaceQuery = v.object({ workspaceId: v.optional(Id) });
