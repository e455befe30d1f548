import * as v from 'valibot';
import { Id, Name } from '../../shared/http/schemas.js';

/** Path parameters of the operations on one item. */
export const ItemParams = v.object({ id: Id });

/** A folder name, and the name to use instead when a sibling folder already has it. */
export const FallbackName = v.optional(Name);

/** The folder-item shape (spec: Folder items), for the OpenAPI document. */
export const FolderItemSchema = v.object({
  id: Id,
  type: v.picklist(['folder', 'markup']),
  createdAt: v.number(),
  modifiedAt: v.number(),
  deletedAt: v.null(),
  scopes: v.array(v.string()),
  assignedRoleSlugs: v.array(v.string()),
  name: v.string(),
  parentFolderId: v.nullable(Id),
  workspaceId: Id,
});

export const FolderWithAncestorsSchema = v.object({
  ...FolderItemSchema.entries,
  ancestors: v.array(FolderItemSchema),
});

/** The markup shape is the markups group's; here only the fields every markup has. */
export const MarkupSummarySchema = v.looseObject({ id: Id, type: v.string(), name: v.string(), createdAt: v.string() });

/** `0`/`1` as the spec writes it, accepted as a JSON number or a string. */
export const WithPath = v.optional(
  v.pipe(v.union([v.picklist([0, 1]), v.picklist(['0', '1'])], 'must be 0 or 1'), v.transform((value) => Number(value) === 1)),
  0,
);

export const ItemIdList = v.pipe(
  v.array(Id),
  v.minLength(1, 'must list at least one item'),
  v.maxLength(50, 'must list at most 50 items'),
);
