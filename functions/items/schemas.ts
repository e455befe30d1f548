import * as v from 'valibot';
import { CHILD_ORDERS } from '../../shared/domain/items/read.js';
import { Cursor, Id, Name, queryInteger } from '../../shared/http/schemas.js';

/** The answers' schemas are the domain's views' types: they live in shared/schemas. */
export {
  ChildFolderSchema,
  ChildItemPageSchema,
  ChildMarkupSchema,
  FolderItemSchema,
  FolderWithAncestorsSchema,
  ItemSchema,
  MarkupSummarySchema,
  MoveItemsResultSchema,
} from '../../shared/schemas/items.js';

/** Path parameters of the operations on one item. */
export const ItemParams = v.object({ id: Id });

/** A folder name, and the name to use instead when a sibling folder already has it. */
export const FallbackName = v.optional(Name);

/** `0`/`1` as the spec writes it, accepted as a JSON number or a string. */
export const WithPath = v.optional(
  v.pipe(
    v.union([v.picklist([0, 1]), v.picklist(['0', '1'])], 'must be 0 or 1'),
    v.transform((value) => Number(value) === 1),
  ),
  0,
);

export const ItemIdList = v.pipe(v.array(Id), v.minLength(1, 'must list at least one item'), v.maxLength(50, 'must list at most 50 items'));

/** PATCH /items/archive and /items/restore. */
export const ItemBatchBody = v.object({ folderItemIds: ItemIdList, withPath: WithPath });

export const CreateFolderBody = v.object({ parentFolderId: Id, name: Name, fallbackName: FallbackName });

export const MoveItemBody = v.object({ parentFolderId: Id, fallbackName: FallbackName });

const MoveEntry = v.object({ id: Id, fallbackName: FallbackName });

export const MoveItemsBody = v.object({
  parentFolderId: Id,
  items: v.pipe(v.array(MoveEntry), v.minLength(1, 'must list at least one item'), v.maxLength(50, 'must list at most 50 items')),
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
