import { createExternalUser, toPublicExternalUser } from '../../shared/domain/external-users.js';
import { pickWorkspaceId, resolveWorkspace } from '../../shared/domain/scope.js';
import { ok, operation } from '../../shared/http/route.js';
import { CreateExternalUserBody, ExternalUserQuery, ExternalUserSchema } from './external-schemas.js';

export const createExternalUserOperation = operation({
  operationId: 'createExternalUser',
  summary: 'Create an external (feedback) user of the workspace ahead of its first token exchange',
  description:
    '`externalId` is the id the customer\'s site gives the user (the `sub` of its JWTs), 1 to 255 characters; 409 when the workspace has it ' +
    'already. `avatarUrl` must be https; `avatarFileId` a confirmed `external_user_avatar` upload made for this `externalId` in this ' +
    'workspace (400 unknown, unconfirmed or made for something else; 403 another workspace); the upload is referenced, not consumed. ' +
    'Organization keys name `workspaceId`. The answer\'s `id` is the user its threads and messages carry (`guest: true`).',
  auth: 'apiKey',
  permission: 'external-user:create',
  query: ExternalUserQuery,
  body: CreateExternalUserBody,
  responses: [{ status: 200, description: 'The new external user', schema: ExternalUserSchema }],
  handle: async ({ principal, query, body }) => {
    const workspace = await resolveWorkspace(principal, pickWorkspaceId(query.workspaceId, body.workspaceId));
    const { externalId, workspaceId: _workspaceId, ...fields } = body;
    return ok(toPublicExternalUser(await createExternalUser(workspace, externalId, fields)));
  },
});
