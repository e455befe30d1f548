import { listInstallations, toPublicInstallation } from '../../shared/domain/installations/installations.js';
import { okPage, operation } from '../../shared/http/route.js';
import { DEFAULT_PAGE_SIZE, InstallationPageSchema, ListInstallationsQuery } from './schemas.js';

export const listInstallationsOperation = operation({
  operationId: 'listInstallations',
  summary: 'List installations',
  description:
    "The workspace's installations, newest first. " +
    "`workspaceId` defaults to a workspace key's own workspace; organization keys must pass it. `limit` (default 50, at most 100). " +
    'Next page: `before=<nextCursor>`.',
  auth: 'apiKey',
  permission: 'installation:read',
  query: ListInstallationsQuery,
  responses: [{ status: 200, description: 'A page of installations', schema: InstallationPageSchema }],
  handle: async ({ principal, query }) => {
    const page = await listInstallations(principal, {
      workspaceId: query.workspaceId,
      limit: query.limit ?? DEFAULT_PAGE_SIZE,
      before: query.before,
    });
    return okPage(page.items.map(toPublicInstallation), { hasMore: page.hasMore, nextCursor: page.nextCursor });
  },
});
