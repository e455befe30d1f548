import { changeMemberRole } from '../../shared/domain/organizations/members.js';
import { resolveWorkspaceForMember } from '../../shared/domain/workspaces/scope.js';
import { noContent, operation } from '../../shared/http/route.js';
import { WorkspaceIdInput } from '../../shared/http/schemas.js';
import { RoleBody, UserIdParams } from './schemas.js';

export const changeUserRoleOperation = operation({
  operationId: 'changeUserRole',
  summary: 'Change a role',
  description:
    "Changes a member's or invitee's role. " +
    "Admins and owners (plain keys act as owners). Nobody gives a role above their own, and only an owner changes an owner's role (403 `role-above-caller`, " +
    '`owner-required`). The last active owner cannot be demoted (409 `last-owner`). 404 for a user who is not a member of the workspace.',
  auth: 'apiKey',
  permission: 'user:manage',
  params: UserIdParams,
  query: WorkspaceIdInput,
  body: RoleBody,
  responses: [{ status: 204, description: 'Changed (or already that role)' }],
  handle: async ({ principal, params, query, body }) => {
    const { workspace, role } = await resolveWorkspaceForMember(principal, query.workspaceId);
    await changeMemberRole(workspace.id, role, params.userId, body.role);
    return noContent();
  },
});
