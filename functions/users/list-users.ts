import { listWorkspaceUsers, MAX_MEMBERS } from '../../shared/domain/organizations/members.js';
import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { ok, operation } from '../../shared/http/route.js';
import { WorkspaceIdInput } from '../../shared/http/schemas.js';
import * as v from 'valibot';
import { WorkspaceUser } from './schemas.js';

export const listUsersOperation = operation({
  operationId: 'listUsers',
  summary: 'List members and invitees',
  description:
    "The workspace's members (status `active`) and invitees (status `invited`). " +
    `Plain API users and organization keys are not members and are not listed. A workspace has at most ${MAX_MEMBERS} members and invitees ` +
    "(invitations past that are refused), so the list comes whole, without pages. `workspaceId` defaults to a workspace key's own workspace; organization keys must pass it.",
  auth: 'apiKey',
  permission: 'user:list',
  query: WorkspaceIdInput,
  responses: [{ status: 200, description: 'Members and invitees, by name', schema: v.array(WorkspaceUser) }],
  handle: async ({ principal, query }) => {
    const workspace = await resolveWorkspace(principal, query.workspaceId);
    return ok(await listWorkspaceUsers(workspace.id));
  },
});
