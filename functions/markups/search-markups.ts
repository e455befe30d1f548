import { workspaceAccess } from '../../shared/domain/markups/access.js';
import { unreadThreadCounts } from '../../shared/domain/comments/unread-counts.js';
import { searchMarkups } from '../../shared/domain/markups/search.js';
import { toPublicMarkups } from '../../shared/domain/markups/view.js';
import { withoutMovedOut } from '../../shared/domain/items/pending-moves.js';
import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { okPage, operation } from '../../shared/http/route.js';
import { DEFAULT_PAGE_SIZE, MarkupSearchPageSchema, SearchMarkupsQuery } from './schemas.js';

export const searchMarkupsOperation = operation({
  operationId: 'searchMarkups',
  summary: 'Search markups',
  description:
    'Markups of the workspace (every folder) whose name or URL has, for every word of `query`, a word that starts with it ' +
    '(case-insensitive; words are runs of letters and digits). Markups whose words start with the query word are listed by that ' +
    'word (the whole word first), newest first within a word; each markup once. A markup is found by the first ten distinct words of ' +
    'its name, then of its URL (without `http`, `https`, `www`); a query whose words are only those three, or that has no word, matches ' +
    'names and URLs that contain it, newest first, reading up to 5,000 markups a request. An empty `query` matches every markup. ' +
    '`workspaceId` as for the list. `limit` (default 50, ' +
    'at most 100); next page: `before=<nextCursor>`. `include` as for the list. Each markup also carries the extension field ' +
    '`unreadThreads`: how many of its threads the caller has not read (`read: false` on GET /threads).',
  auth: 'apiKey',
  permission: 'markup:list',
  query: SearchMarkupsQuery,
  responses: [{ status: 200, description: 'Matching markups', schema: MarkupSearchPageSchema }],
  handle: async ({ principal, query, appUrl }) => {
    const workspace = await resolveWorkspace(principal, query.workspaceId);
    const [{ role, plan }, page] = await Promise.all([
      workspaceAccess(principal, workspace),
      searchMarkups(workspace.id, { text: query.query, limit: query.limit ?? DEFAULT_PAGE_SIZE, before: query.before }),
    ]);
    const context = { role, plan, appUrl, include: query.include, fileUrlTtlSeconds: query.ttl };
    // Markups under a folder moved out of this workspace, not carried yet, answer to the destination only.
    const items = await withoutMovedOut(workspace, page.items);
    const [markups, unread] = await Promise.all([
      toPublicMarkups(items, context),
      unreadThreadCounts(
        items.map((markup) => markup.id),
        principal.userId,
      ),
    ]);
    const withUnread = markups.map((markup) => ({ ...markup, unreadThreads: unread.get(String(markup.id)) ?? 0 }));
    return okPage(withUnread, { hasMore: page.hasMore, nextCursor: page.nextCursor });
  },
});
