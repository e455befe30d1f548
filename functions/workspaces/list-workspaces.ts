import * as v from 'valibot';
import { listWorkspaces, toPublicWorkspace } from '../../shared/db/workspaces.js';
import { requireOrganizationKey } from '../../shared/domain/scope.js';
import { ok, operation } from '../../shared/http/route.js';
import { Cursor, queryInteger } from '../../shared/http/schemas.js';
import { WorkspaceSchema } from './schemas.js';

/** Workspaces rule 1: name ascending by default, 50 a page. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

const Query = v.object({
  sortBy: v.optional(v.picklist(['name', 'lastActivity'], 'must be name or lastActivity'), 'name'),
  dir: v.optional(v.picklist(['asc', 'desc'], 'must be asc or desc')),
  limit: v.optional(queryInteger(1, MAX_PAGE_SIZE)),
  before: v.optional(Cursor),
  since: v.optional(Cursor),
});

export const listWorkspacesOperation = operation({
  operationId: 'listWorkspaces',
  summary: "The organization's workspaces (organization keys only)",
  description:
    'Ordered by `sortBy` (`name`, default, or `lastActivity`) in `dir` order (default `asc` for name, `desc` for lastActivity). ' +
    '`limit` is the page size (default 50, at most 100). Next page: `before=<nextCursor>`; previous page: `since=<prevCursor>`.',
  auth: 'apiKey',
  query: Query,
  responses: [{ status: 200, description: 'A page of workspaces', schema: v.array(WorkspaceSchema) }],
  handle: async ({ principal, query }) => {
    requireOrganizationKey(principal);
    const page = await listWorkspaces(principal.organizationId, {
      sortBy: query.sortBy,
      dir: query.dir ?? (query.sortBy === 'lastActivity' ? 'desc' : 'asc'),
      limit: query.limit ?? DEFAULT_PAGE_SIZE,
      before: query.before,
      since: query.since,
    });
    return ok(page.items.map(toPublicWorkspace), { hasMore: page.hasMore, nextCursor: page.nextCursor, prevCursor: page.prevCursor });
  },
});
