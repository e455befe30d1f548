import { workspaceAccess } from '../../shared/domain/markups/access.js';
import { listMarkups } from '../../shared/domain/markups/search.js';
import { toPublicMarkups } from '../../shared/domain/markups/view.js';
import { withoutMovedOut } from '../../shared/domain/items/pending-moves.js';
import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { okPage, operation } from '../../shared/http/route.js';
import { DEFAULT_PAGE_SIZE, ListMarkupsQuery, MarkupListSchema } from './schemas.js';

export const listMarkupsOperation = operation({
  operationId: 'listMarkups',
  summary: 'List markups',
  description:
    "The workspace's markups, newest first. " +
    "`workspaceId` defaults to a workspace key's own workspace; organization keys must pass it. `limit` (default 50, at most 100). " +
    'Next page: `before=<nextCursor>`; previous page: `since=<prevCursor>`. `include` (comma-separated `media`, `images`, `videos`, ' +
    '`documents`) expands file fields, whose URLs live `ttl` seconds (at most 604800); without it markups are metadata only.',
  auth: 'apiKey',
  permission: 'markup:list',
  query: ListMarkupsQuery,
  responses: [{ status: 200, description: 'A page of markups', schema: MarkupListSchema }],
  handle: async ({ principal, query, appUrl }) => {
    const workspace = await resolveWorkspace(principal, query.workspaceId);
    const [{ role, plan }, page] = await Promise.all([
      workspaceAccess(principal, workspace),
      listMarkups(workspace.id, { limit: query.limit ?? DEFAULT_PAGE_SIZE, before: query.before, since: query.since }),
    ]);
    const context = { role, plan, appUrl, include: query.include, fileUrlTtlSeconds: query.ttl };
    // Markups under a folder moved out of this workspace, not carried yet, answer to the destination only.
    const items = await withoutMovedOut(workspace, page.items);
    return okPage(await toPublicMarkups(items, context), page);
  },
});
