import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { toPublicWorkspace } from '../../shared/domain/workspaces/workspaces.js';
import { ok, operation } from '../../shared/http/route.js';
import { WorkspaceQuery, WorkspaceSchema } from './schemas.js';

export const getWorkspaceOperation = operation({
  operationId: 'getWorkspace',
  summary: 'Get the workspace',
  description: "The key's workspace; organization keys name it with `workspaceId`, or get the organization's default workspace.",
  auth: 'apiKey',
  permission: 'workspace:read',
  query: WorkspaceQuery,
  responses: [{ status: 200, description: 'The workspace', schema: WorkspaceSchema }],
  handle: async ({ principal, query }) => {
    const workspace = await resolveWorkspace(principal, query.workspaceId, { useDefault: true });
    return ok(toPublicWorkspace(workspace), workspace.version);
  },
});
