import { countFolderChildren } from '../../db/folder-counts.js';
import { fromItem, getItems, childrenPartition, type FolderRecord } from '../../db/items.js';
import { queryPage, type Page } from '../../db/core/paging.js';
import { getPlan } from '../../db/plans.js';
import type { IndexName } from '../../db/core/table.js';
import { BadRequestError } from '../../errors.js';
import type { ChildFolderView, ChildMarkupView, ItemView } from '../../schemas/items.js';
import { unreadThreadCounts } from '../comments/unread-counts.js';
import { INCLUDE_ALL, markupCardFields, toPublicMarkup, type MarkupViewContext } from '../markups/view.js';
import type { ItemAccess } from './access.js';
import { toChildItem, toFolderItem, type ChildMarkupCard } from './views.js';

/** The version an item's ETag carries (`GET /items/{id}`, `GET /markups/{id}` and the writes that answer them). */
export { itemVersion } from '../../db/items.js';

/** Items per read when `page` skips ahead (one Query each). */
const SKIP_CHUNK = 100;

/**
 * GET /items/:id. A markup answers with the public Markup shape; a folder with its folder-item
 * fields and `ancestors` (root first), read with one BatchGet.
 */
export async function describeItem(access: ItemAccess, links: Pick<MarkupViewContext, 'appUrl'>): Promise<ItemView> {
  const { item, role } = access;
  if (item.kind === 'markup')
    return toPublicMarkup(item, { role, plan: await getPlan(item.organizationId), ...links, include: INCLUDE_ALL });
  const byId = new Map((await getItems(item.ancestorIds)).map((ancestor) => [ancestor.id, ancestor]));
  // A folder's ancestors share its workspace, also while a move into another workspace is carrying them.
  const ancestors = item.ancestorIds.flatMap((id) => {
    const ancestor = byId.get(id);
    return ancestor ? [toFolderItem({ ...ancestor, workspaceId: item.workspaceId }, role)] : [];
  });
  return { ...toFolderItem(item, role), ancestors };
}

export const CHILD_ORDERS = ['az', 'za', 'activity', 'created'] as const;
export type ChildOrder = (typeof CHILD_ORDERS)[number];

/** Each order is one children index read forwards or backwards; activity and created list the most recent first. */
const ORDERS: Record<ChildOrder, { index: IndexName; ascending: boolean }> = {
  az: { index: 'GSI1', ascending: true },
  za: { index: 'GSI1', ascending: false },
  activity: { index: 'GSI3', ascending: false },
  created: { index: 'GSI2', ascending: false },
};

export interface ChildListOptions {
  order: ChildOrder;
  limit: number;
  /** 1-based; page N skips (N-1)·limit children by following cursors. */
  page: number;
  before?: string;
  since?: string;
}

/**
 * One page of a folder's children (folders and markups together, as `toChildItem` shows them: each
 * folder with its counts, read in parallel; each markup with its card, from its listed record, and
 * the caller's unread threads, one BatchGetItem per 50 markups while the counts are current).
 * `page` is reached by walking cursors from the start in reads of up to 100, so the page it answers
 * carries a `prevCursor` and a `nextCursor` like any other; a page past the end is empty.
 */
export async function listChildItems(
  access: ItemAccess<FolderRecord>,
  options: ChildListOptions,
  links: Pick<MarkupViewContext, 'appUrl' | 'fileUrlTtlSeconds'>,
  userId: string,
): Promise<Page<ChildFolderView | ChildMarkupView>> {
  if (options.page > 1 && (options.before !== undefined || options.since !== undefined)) {
    throw new BadRequestError('page cannot be combined with before or since: a cursor already says where the page starts.');
  }
  const query = {
    list: `items:children:${options.order}`,
    ...ORDERS[options.order],
    partitionValue: childrenPartition(access.item.id),
    limit: options.limit,
    before: options.before,
    since: options.since,
  };
  let toSkip = (options.page - 1) * options.limit;
  let cursor = options.before;
  while (toSkip > 0) {
    const step = Math.min(toSkip, SKIP_CHUNK);
    const skipped = await queryPage({ ...query, limit: step, before: cursor }, () => null);
    if (!skipped.nextCursor) return { items: [], hasMore: false, nextCursor: null, prevCursor: null };
    cursor = skipped.nextCursor;
    toSkip -= step;
  }
  const page = await queryPage({ ...query, before: cursor }, fromItem);
  const markups = page.items.filter((item) => item.kind === 'markup');
  const [counts, unread, cards] = await Promise.all([
    Promise.all(
      page.items.filter((item) => item.kind === 'folder').map(async (folder) => [folder.id, await countFolderChildren(folder.id)] as const),
    ).then((entries) => new Map(entries)),
    unreadThreadCounts(
      markups.map((markup) => markup.id),
      userId,
    ),
    Promise.all(markups.map(async (markup) => [markup.id, await markupCardFields(markup, links)] as const)).then(
      (entries) => new Map(entries),
    ),
  ]);
  const cardOf = (id: string): ChildMarkupCard | undefined => {
    const card = cards.get(id);
    return card ? { ...card, unreadThreads: unread.get(id) ?? 0 } : undefined;
  };
  // Children share their folder's workspace, also while a move into another workspace is carrying them.
  const workspaceId = access.item.workspaceId;
  return {
    ...page,
    items: page.items.map((item) => toChildItem({ ...item, workspaceId }, access.role, links.appUrl, counts.get(item.id), cardOf(item.id))),
  };
}
