import { listOrganizationWorkspaces } from '../../shared/domain/workspaces/workspaces.js';
import { okPage, operation } from '../../shared/http/route.js';
import { DEFAULT_PAGE_SIZE, ListWorkspacesQuery, WorkspaceListSchema } from './schemas.js';

export const listWorkspacesOperation = operation({
  operationId: 'listWorkspaces',
  summary: 'List workspaces',
  description:
    "The organization's workspaces. Organization keys only. " +
    'Ordered by `sortBy` (`name`, default, or `lastActivity`) in `dir` order (default `asc` for name, `desc` for lastActivity). ' +
    '`limit` is the page size (default 50, at most 100). Next page: `before=<nextCursor>`; previous page: `since=<prevCursor>`.',
  auth: 'apiKey',
  permission: 'workspace:list',
  query: ListWorkspacesQuery,
  responses: [{ status: 200, description: 'A page of workspaces', schema: WorkspaceListSchema }],
  handle: async ({ principal, query }) => {
    const page = await listOrganizationWorkspaces(principal, {
      sortBy: query.sortBy,
      dir: query.dir ?? (query.sortBy === 'lastActivity' ? 'desc' : 'asc'),
      limit: query.limit ?? DEFAULT_PAGE_SIZE,
      before: query.before,
      since: query.since,
    });
    return okPage(page.items, page);
  },
});
