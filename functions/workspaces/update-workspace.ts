import { pickWorkspaceId, resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { toPublicWorkspace, updateWorkspace } from '../../shared/domain/workspaces/workspaces.js';
import { ok, operation } from '../../shared/http/route.js';
import { UpdateWorkspaceBody, WorkspaceQuery, WorkspaceSchema } from './schemas.js';

export const updateWorkspaceOperation = operation({
  operationId: 'updateWorkspace',
  summary: 'Update a workspace',
  description: 'Renames a workspace or changes its slug. Slugs are unique in the organization: 409 when taken.',
  auth: 'apiKey',
  permission: 'workspace:update',
  query: WorkspaceQuery,
  body: UpdateWorkspaceBody,
  responses: [{ status: 200, description: 'The updated workspace', schema: WorkspaceSchema }],
  handle: async ({ principal, query, body, ifMatch }) => {
    const workspace = await resolveWorkspace(principal, pickWorkspaceId(query.workspaceId, body.workspaceId));
    const updated = await updateWorkspace(workspace, { name: body.name, slug: body.slug }, ifMatch);
    return ok(toPublicWorkspace(updated), updated.version);
  },
});
