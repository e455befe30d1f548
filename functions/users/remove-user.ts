import { removeMember } from '../../shared/domain/organizations/members.js';
import { resolveWorkspaceForMember } from '../../shared/domain/workspaces/scope.js';
import { noContent, operation } from '../../shared/http/route.js';
import { WorkspaceIdInput } from '../../shared/http/schemas.js';
import { UserIdParams } from './schemas.js';

export const removeUserOperation = operation({
  operationId: 'removeUser',
  summary: 'Remove a member',
  description:
    'Removes a member or withdraws an invitation. ' +
    'Admins and owners (plain keys act as owners); only an owner removes an owner (403 `owner-required`), and the last active owner stays (409 `last-owner`). ' +
    'Every key made for the member in this workspace (`admin key create --email`) is revoked with the membership: it answers 401 from then on, ' +
    'also when the address is added again (that makes a new membership with new keys). 404 for a user who is not a member of the workspace.',
  auth: 'apiKey',
  permission: 'user:manage',
  params: UserIdParams,
  query: WorkspaceIdInput,
  responses: [{ status: 204, description: 'Removed' }],
  handle: async ({ principal, params, query }) => {
    const { workspace, role } = await resolveWorkspaceForMember(principal, query.workspaceId);
    await removeMember(workspace, role, params.userId);
    return noContent();
  },
});
