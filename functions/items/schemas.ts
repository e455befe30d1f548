import * as v from 'valibot';
import { CHILD_ORDERS } from '../../shared/domain/items/read.js';
import { Cursor, Id, Name, pageSchema, queryInteger } from '../../shared/http/schemas.js';

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

/** GET /items/{id}: a folder with its ancestors, or a markup. */
export const ItemSchema = v.union([FolderWithAncestorsSchema, MarkupSummarySchema]);

/** A folder in a child listing (and a created folder): what it holds, and neither `url` nor `markupUrl`. */
export const ChildFolderSchema = v.object({ ...FolderItemSchema.entries, type: v.literal('folder'), folderCount: v.number(), projectCount: v.number() });

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

/** PATCH /items/archive and /items/restore. */
export const ItemBatchBody = v.object({ folderItemIds: ItemIdList, withPath: WithPath });

export const CreateFolderBody = v.object({ parentFolderId: Id, name: Name, fallbackName: FallbackName });

export const MoveItemBody = v.object({ parentFolderId: Id, fallbackName: FallbackName });

const MoveEntry = v.object({ id: Id, fallbackName: FallbackName });

export const MoveItemsBody = v.object({
  parentFolderId: Id,
  items: v.pipe(v.array(MoveEntry), v.minLength(1, 'must list at least one item'), v.maxLength(50, 'must list at most 50 items')),
});

export const MoveItemsResultSchema = v.object({
  successes: v.array(FolderItemSchema),
  errors: v.array(v.object({ itemId: v.string(), statusCode: v.number(), message: v.string() })),
});

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/** Pages past this are refused: reaching page N reads every child before it. */
export const MAX_PAGE = 1000;
/** Seven days, the longest link lifetime the API hands out. */
export const MAX_TTL_SECONDS = 604_800;

export const ChildItemsQuery = v.object({
  order: v.optional(v.picklist(CHILD_ORDERS, `must be one of ${CHILD_ORDERS.join(', ')}`), 'az'),
  limit: v.optional(queryInteger(1, MAX_PAGE_SIZE), String(DEFAULT_PAGE_SIZE)),
  page: v.optional(queryInteger(1, MAX_PAGE), '1'),
  ttl: v.optional(queryInteger(1, MAX_TTL_SECONDS)),
  before: v.optional(Cursor),
  since: v.optional(Cursor),
});
