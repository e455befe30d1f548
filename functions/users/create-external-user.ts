import { createExternalUser } from '../../shared/domain/users/external-users.js';
import { pickWorkspaceId, resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { noContent, operation } from '../../shared/http/route.js';
import { CreateExternalUserBody, ExternalUserQuery } from './external-schemas.js';

export const createExternalUserOperation = operation({
  operationId: 'createExternalUser',
  summary: 'Create an external user',
  description:
    'Creates an external (feedback) user of the workspace ahead of its first token exchange. ' +
    "`externalId` is the id the customer's site gives the user (the `sub` of its JWTs), 1 to 255 characters; 409 when the workspace has it " +
    'already. `avatarUrl` must be https; `avatarFileId` a confirmed `external_user_avatar` upload made for this `externalId` in this ' +
    'workspace (400 unknown, unconfirmed or made for something else; 403 another workspace); the upload is referenced, not consumed. ' +
    'Organization keys name `workspaceId`. Answers 204 with no body, as the live service does (DESIGN "Operations listed as 204 but ' +
    'described as returning data"): `GET /users/external/{externalId}` reads the record, whose `id` is the user its threads and messages carry (`guest: true`).',
  auth: 'apiKey',
  permission: 'external-user:create',
  query: ExternalUserQuery,
  body: CreateExternalUserBody,
  responses: [{ status: 204, description: 'Created' }],
  handle: async ({ principal, query, body }) => {
    const workspace = await resolveWorkspace(principal, pickWorkspaceId(query.workspaceId, body.workspaceId));
    const { externalId, workspaceId: _workspaceId, ...fields } = body;
    await createExternalUser(workspace, externalId, fields);
    return noContent();
  },
});
