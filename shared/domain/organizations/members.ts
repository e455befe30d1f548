import { WORKSPACE_ROLE_ORDER } from '../../auth/permissions.js';
import { liveMemberKeyIds, revokeApiKey, revokeApiKeyItem } from '../../db/api-keys.js';
import {
  deleteMember,
  ensureMemberCounts,
  listMembersWithUsers,
  readMember,
  updateMemberRole,
  type MemberWriteResult,
} from '../../db/members.js';
import { fromFreshReads, STALE } from '../../db/core/transact.js';
import { statusOf, type Role } from '../../db/users.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import type { WorkspaceUserView } from '../../schemas/users.js';

/** A workspace user as `GET /users` lists them (`WorkspaceUserSchema`). */
export type WorkspaceUser = WorkspaceUserView;

/** A workspace has at most this many members and invitees (409 `member-limit` past it). */
export { MAX_MEMBERS } from '../../db/members.js';

const rank = (role: Role) => WORKSPACE_ROLE_ORDER.indexOf(role);

/**
 * Who may give which role: nobody gives a role above their own (so an admin never grants `owner`),
 * and only an owner changes or removes an owner (so an admin never takes `owner` away). Plain and
 * organization keys act as owners. `current` is the member's role now (none for an invitation).
 */
export function requireMayAssign(callerRole: Role, current: Role | undefined, next: Role | undefined): void {
  if (next !== undefined && rank(next) > rank(callerRole)) {
    throw new ForbiddenError(`The ${callerRole} role cannot give the ${next} role; only a role at least as high may.`, 'role-above-caller');
  }
  if (current === 'owner' && callerRole !== 'owner') {
    throw new ForbiddenError(`Only an owner may change or remove an owner; the caller is ${callerRole}.`, 'owner-required');
  }
}

/** Members ("active") and invitees ("invited") of a workspace, by name; at most MAX_MEMBERS. */
export async function listWorkspaceUsers(workspaceId: string): Promise<WorkspaceUser[]> {
  const entries = await listMembersWithUsers(workspaceId);
  return entries
    .flatMap(({ member, user }) =>
      user ? [{ id: user.id, email: user.email, name: user.name, role: member.role, status: statusOf(member) }] : [],
    )
    .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

function failureOf(result: MemberWriteResult, userId: string): typeof STALE | undefined {
  if (result === 'stale') return STALE;
  if (result === 'last-owner') {
    throw new ConflictError(`User ${userId} is the workspace's last owner: make another member owner first.`, 'last-owner');
  }
  return undefined;
}

async function memberToChange(workspaceId: string, userId: string) {
  const member = await readMember(workspaceId, userId);
  if (!member) throw new NotFoundError(`User ${userId} is not a member of workspace ${workspaceId}.`);
  return member;
}

/**
 * PATCH /users/:userId/role. The last active owner keeps `owner`: the change and the owner counter
 * move in one transaction conditioned on another owner remaining (409 `last-owner`).
 */
export async function changeMemberRole(workspaceId: string, callerRole: Role, userId: string, role: Role): Promise<void> {
  await ensureMemberCounts(workspaceId);
  await fromFreshReads(`The membership of user ${userId}`, async () => {
    const member = await memberToChange(workspaceId, userId);
    if (member.role === role) return undefined;
    requireMayAssign(callerRole, member.role, role);
    return failureOf(await updateMemberRole(member, role), userId);
  });
}

/** Key revocations that ride in the removal's transaction; a member with more keys has the rest revoked right after. */
const MAX_REVOCATIONS_IN_REMOVAL = 90;

/**
 * DELETE /users/:userId: the membership (or invitation) goes, and with it every key made for the
 * member in this workspace (DESIGN.md: credentials die with what they stand for): revoked in the
 * same transaction, they answer 401 from the next request on and stay dead when the address is
 * added again (a new membership gets new keys). The user record stays: it may belong to other
 * workspaces, whose keys are untouched.
 */
export async function removeMember(workspace: { id: string; organizationId: string }, callerRole: Role, userId: string): Promise<void> {
  await ensureMemberCounts(workspace.id);
  const at = new Date().toISOString();
  let keyIds: string[] = [];
  await fromFreshReads(`The membership of user ${userId}`, async () => {
    const member = await memberToChange(workspace.id, userId);
    requireMayAssign(callerRole, member.role, undefined);
    keyIds = await liveMemberKeyIds(workspace.organizationId, workspace.id, userId);
    const revocations = keyIds.slice(0, MAX_REVOCATIONS_IN_REMOVAL).map((keyId) => revokeApiKeyItem(keyId, at));
    return failureOf(await deleteMember(member, revocations), userId);
  });
  await Promise.all(keyIds.slice(MAX_REVOCATIONS_IN_REMOVAL).map((keyId) => revokeApiKey(keyId, at)));
}
