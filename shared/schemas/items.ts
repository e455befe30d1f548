import * as v from 'valibot';
import { Id, pageSchema } from './builders.js';

/**
 * The public shapes of folder items (spec: Folder items; child listings, moves): the OpenAPI
 * document describes the answers by these schemas, and the domain's views are typed by them.
 */

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

/** GET /items/{id}: a folder with its ancestors, or a markup. */
export const ItemSchema = v.union([FolderWithAncestorsSchema, MarkupSummarySchema]);

/** A folder in a child listing (and a created folder): what it holds, and neither `url` nor `markupUrl`. */
export const ChildFolderSchema = v.object({
  ...FolderItemSchema.entries,
  type: v.literal('folder'),
  folderCount: v.number(),
  projectCount: v.number(),
});

/**
 * A markup in a child listing: `markupUrl` always, `url` when it is a webpage markup, and the
 * extension fields of its card (`markupCardFields`) with the caller's `unreadThreads`.
 */
export const ChildMarkupSchema = v.object({
  ...FolderItemSchema.entries,
  type: v.literal('markup'),
  markupUrl: v.string(),
  url: v.optional(v.string()),
  markupType: v.picklist(['webpage', 'image', 'pdf', 'video']),
  thumbnailUrl: v.string(),
  activeThreads: v.number(),
  unreadThreads: v.number(),
  isReady: v.boolean(),
  originalMimeType: v.optional(v.string()),
  conversionStatus: v.optional(v.picklist(['pending', 'ready', 'failed'])),
  conversionError: v.optional(v.string()),
});

/** GET /items/{id}/items: `{ items, hasMore, nextCursor, prevCursor }` as the live service answers it. */
export const ChildItemPageSchema = pageSchema(v.union([ChildFolderSchema, ChildMarkupSchema]), { key: 'items' });

export const MoveItemsResultSchema = v.object({
  successes: v.array(FolderItemSchema),
  errors: v.array(v.object({ itemId: v.string(), statusCode: v.number(), message: v.string() })),
});

/** A folder or markup as a folder item (spec: Folder items): what `toFolderItem` answers. */
export type FolderItemView = v.InferOutput<typeof FolderItemSchema>;

/** GET /items/{id}: a folder with its ancestors, or a markup. */
export type ItemView = v.InferOutput<typeof ItemSchema>;

/** A folder in a child listing, with what it holds. */
export type ChildFolderView = v.InferOutput<typeof ChildFolderSchema>;

/** A markup in a child listing, with its card. */
export type ChildMarkupView = v.InferOutput<typeof ChildMarkupSchema>;
