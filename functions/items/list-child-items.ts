import { loadFolderForCaller } from '../../shared/domain/items/access.js';
import { finishMovesAround } from '../../shared/domain/items/pending-moves.js';
import { listChildItems } from '../../shared/domain/items/read.js';
import { okPage, operation } from '../../shared/http/route.js';
import { ChildItemsQuery, ChildItemPageSchema, ItemParams } from './schemas.js';

export const listChildItemsOperation = operation({
  operationId: 'listChildItems',
  summary: 'List child items',
  description:
    "A folder's children, folders and markups, each with its `type`. List archived items on the workspace's `archiveFolderId`. " +
    '`order`: `az` (default; name ascending, case-insensitive), `za` (name descending), `activity` (most recent activity first: ' +
    'creation, rename, move, or something put in the folder) or `created` (newest first). `limit`: page size, default 50, at most 100. ' +
    'Next page: `before=<nextCursor>`; previous page: `since=<prevCursor>`; a cursor is valid only for the folder and order it came from. ' +
    '`page` (1-based, default 1, at most 1000): page N starts after the first (N-1)*limit children, reached by following cursors from the start, ' +
    'so prefer cursors for deep pages; it cannot be combined with `before`/`since` (400); a page past the end is empty. ' +
    "`ttl` (seconds, 1..604800): lifetime of the markups' `thumbnailUrl` links. " +
    'Each markup also carries the extension fields of its card, as GET /markups/{id} shows them: `markupType` (its Markup `type`), ' +
    '`thumbnailUrl`, `activeThreads`, `isReady` and, for file markups, the conversion state; and `unreadThreads`, how many of its ' +
    'threads the caller has not read (`read: false` on GET /threads), which drops as the caller marks threads read. ' +
    '404 when the id is unknown or names a markup.',
  auth: 'apiKey',
  permission: 'item:read',
  params: ItemParams,
  query: ChildItemsQuery,
  responses: [
    {
      status: 200,
      description: 'A page of child items (under `items`) with hasMore, nextCursor and prevCursor',
      schema: ChildItemPageSchema,
    },
  ],
  handle: async ({ principal, params, query, appUrl }) => {
    let folder = await loadFolderForCaller(principal, params.id);
    // A move cut short after its commit shows its tree in two workspaces: reading it finishes it first.
    if (await finishMovesAround(folder.item)) folder = await loadFolderForCaller(principal, params.id, { consistent: true });
    const page = await listChildItems(folder, query, { appUrl, fileUrlTtlSeconds: query.ttl }, principal.userId);
    return okPage(page.items, page, 'items');
  },
});
