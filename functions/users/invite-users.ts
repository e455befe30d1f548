import { inviteUsers } from '../../shared/domain/organizations/invitations.js';
import { MAX_MEMBERS } from '../../shared/domain/organizations/members.js';
import { noContent, operation } from '../../shared/http/route.js';
import { WorkspaceIdInput } from '../../shared/http/schemas.js';
import { InviteBody } from './schemas.js';

export const inviteUsersOperation = operation({
  operationId: 'inviteUsers',
  summary: 'Invite people',
  description:
    'Invites people by email: each is listed at once as invited and gets an invitation email. ' +
    'Only a workspace member with a verified email (a key made for the member, `admin key create --email`) and role admin or owner may invite: plain API keys and ' +
    "organization keys get 403 `verified-email-required`. `role` (default contributor) is at most the caller's own. Addresses already invited or members change " +
    `nothing. A workspace has at most ${MAX_MEMBERS} members and invitees (409 \`member-limit\`). An email that could not be sent is sent when the address is invited again.`,
  auth: 'apiKey',
  permission: 'user:invite',
  query: WorkspaceIdInput,
  body: InviteBody,
  responses: [{ status: 204, description: 'Invited' }],
  handle: async ({ principal, query, body, appUrl }) => {
    await inviteUsers(principal, query.workspaceId, body, appUrl);
    return noContent();
  },
});
