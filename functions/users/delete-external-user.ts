import { deleteExternalUser } from '../../shared/domain/users/external-users.js';
import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { noContent, operation } from '../../shared/http/route.js';
import { ExternalUserParams, ExternalUserQuery } from './external-schemas.js';

export const deleteExternalUserOperation = operation({
  operationId: 'deleteExternalUser',
  summary: 'Delete an external user',
  description:
    'Its threads and messages stay, their author shown as "Former user" (`guest: true`). The same externalId may be created again ' +
    '(or come back through a token exchange): that is a new user, and the earlier threads stay "Former user". 404 when unknown.',
  auth: 'apiKey',
  permission: 'external-user:delete',
  params: ExternalUserParams,
  query: ExternalUserQuery,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, params, query }) => {
    await deleteExternalUser(await resolveWorkspace(principal, query.workspaceId), params.externalId);
    return noContent();
  },
});
