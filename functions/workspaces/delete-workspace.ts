import { pickWorkspaceId, resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { deleteWorkspace } from '../../shared/domain/workspaces/workspaces.js';
import { noContent, operation } from '../../shared/http/route.js';
import { WorkspaceIdInput } from '../../shared/http/schemas.js';
import { WorkspaceQuery } from './schemas.js';

export const deleteWorkspaceOperation = operation({
  operationId: 'deleteWorkspace',
  summary: 'Delete a workspace',
  description: 'Organization keys delete any workspace of the organization, named by `workspaceId`; workspace keys delete their own.',
  auth: 'apiKey',
  permission: 'workspace:delete',
  query: WorkspaceQuery,
  body: WorkspaceIdInput,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, query, body, ifMatch }) => {
    await deleteWorkspace(await resolveWorkspace(principal, pickWorkspaceId(query.workspaceId, body.workspaceId)), ifMatch);
    return noContent();
  },
});
