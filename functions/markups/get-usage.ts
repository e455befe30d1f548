import { getMarkupUsage } from '../../shared/domain/markups/usage.js';
import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { ok, operation } from '../../shared/http/route.js';
import { WorkspaceIdInput } from '../../shared/http/schemas.js';
import { UsageSchema } from './schemas.js';

export const getUsageOperation = operation({
  operationId: 'getMarkupUsage',
  summary: 'Get markup usage',
  description:
    "The workspace's markup usage this month (UTC) against the plan allowance and the organization's bundle. Workspace keys: their workspace; organization keys: `workspaceId`, or the organization's default workspace.",
  auth: 'apiKey',
  permission: 'workspace:read',
  query: WorkspaceIdInput,
  responses: [{ status: 200, description: 'Markup usage', schema: UsageSchema }],
  handle: async ({ principal, query }) =>
    ok(await getMarkupUsage(await resolveWorkspace(principal, query.workspaceId, { useDefault: true }))),
});
