import { updateExternalUser } from '../../shared/domain/users/external-users.js';
import { pickWorkspaceId, resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { noContent, operation } from '../../shared/http/route.js';
import { ExternalUserParams, ExternalUserQuery, UpdateExternalUserBody } from './external-schemas.js';

export const updateExternalUserOperation = operation({
  operationId: 'updateExternalUser',
  summary: 'Update an external user',
  description:
    'Changes any of `name`, `email`, `avatarUrl`, `avatarFileId`; `null` clears one. ' +
    'The name its threads and messages show follows in the same write (its name, else its email, else its externalId). `avatarFileId` as ' +
    'on creation. 404 unknown externalId. Answers 204 with no body, as the live service does; `GET /users/external/{externalId}` reads the result.',
  auth: 'apiKey',
  permission: 'external-user:update',
  params: ExternalUserParams,
  query: ExternalUserQuery,
  body: UpdateExternalUserBody,
  responses: [{ status: 204, description: 'Changed (or already so)' }],
  handle: async ({ principal, params, query, body }) => {
    const workspace = await resolveWorkspace(principal, pickWorkspaceId(query.workspaceId, body.workspaceId));
    const { workspaceId: _workspaceId, ...changes } = body;
    await updateExternalUser(workspace, params.externalId, changes);
    return noContent();
  },
});
