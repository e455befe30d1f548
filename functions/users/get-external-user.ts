import { getExternalUserOf, toPublicExternalUser } from '../../shared/domain/users/external-users.js';
import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { ok, operation } from '../../shared/http/route.js';
import { ExternalUserParams, ExternalUserQuery, ExternalUserSchema } from './external-schemas.js';

export const getExternalUserOperation = operation({
  operationId: 'getExternalUser',
  summary: 'Get an external user',
  description: 'An external user of the workspace by its `externalId`; 404 when unknown.',
  auth: 'apiKey',
  permission: 'external-user:read',
  params: ExternalUserParams,
  query: ExternalUserQuery,
  responses: [{ status: 200, description: 'The external user', schema: ExternalUserSchema }],
  handle: async ({ principal, params, query }) => {
    const workspace = await resolveWorkspace(principal, query.workspaceId);
    return ok(toPublicExternalUser(await getExternalUserOf(workspace, params.externalId)));
  },
});
