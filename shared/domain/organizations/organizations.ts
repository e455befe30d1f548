import { randomUUID } from 'node:crypto';
import { generateApiKey } from '../../auth/api-key-format.js';
import { liveMemberKeyIds, revokeApiKeyItem, toApiKeyItem, type ApiKeyRecord } from '../../db/api-keys.js';
import { getOrganization, toOrganizationItem } from '../../db/organizations.js';
import { defaultPlan, toPlanItem } from '../../db/plans.js';
import { emptyStorageItem } from '../../db/storage.js';
import { activateMemberItems, ensureMemberCounts, MAX_MEMBERS, newMemberItems, readMember, verifyUserEmailItem } from '../../db/members.js';
import { putNew, transact, transactUnlessConditionFails, type TransactItem } from '../../db/core/transact.js';
import { findUserIdByEmail, getUser, hasMembers, statusOf, toUserEmailItem, toUserItem, type Role, type User } from '../../db/users.js';
import { getWorkspace } from '../../db/workspaces.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { createWorkspace } from '../workspaces/workspaces.js';

export interface IssuedKey {
  apiKey: string;
  keyId: string;
  scope: 'organization' | 'workspace';
  organizationId: string;
  workspaceId?: string;
  userId: string;
}

/**
 * Transaction items for a new key and the API user it acts as (a stable user named after the key:
 * its label when it has one, else its id's first characters). The plain key exists only in the
 * return value; the table keeps its hash.
 */
function apiKeyItems(
  scope: IssuedKey['scope'],
  organizationId: string,
  workspaceId: string | undefined,
  options: { actingUserId?: string; name?: string } = {},
) {
  const { actingUserId, name } = options;
  const generated = generateApiKey();
  const now = new Date();
  const items: TransactItem[] = [];
  let userId = actingUserId;
  if (!userId) {
    const user: User = {
      id: randomUUID(),
      name: name ?? `API key ${generated.keyId.slice(0, 8)}`,
      email: null,
      emailVerified: false,
      kind: 'api',
      createdAt: now.getTime(),
      modifiedAt: now.getTime(),
    };
    userId = user.id;
    items.push(putNew(toUserItem(user)));
  }
  const record: ApiKeyRecord = {
    keyId: generated.keyId,
    secretHash: generated.secretHash,
    scope,
    organizationId,
    workspaceId,
    userId,
    actsAsMember: actingUserId !== undefined,
    ...(name === undefined ? {} : { name }),
    createdAt: now.toISOString(),
  };
  items.push(putNew(toApiKeyItem(record)));
  const issued: IssuedKey = { apiKey: generated.apiKey, keyId: generated.keyId, scope, organizationId, workspaceId, userId };
  return { items, issued };
}

/**
 * Names of what `createOrganization` makes besides the organization; by default the workspace takes the organization's name and the keys
 * none.
 */
export interface NewOrganizationNames {
  workspaceName?: string;
  organizationKeyName?: string;
  workspaceKeyName?: string;
}

/** A new organization with its plan, one workspace, an organization key and a workspace key, all or nothing. */
export async function createOrganization(name: string, names: NewOrganizationNames = {}) {
  const organizationId = randomUUID();
  const orgKey = apiKeyItems('organization', organizationId, undefined, { name: names.organizationKeyName });
  let workspaceKey: ReturnType<typeof apiKeyItems> | undefined;
  const workspace = await createWorkspace(organizationId, names.workspaceName ?? name, (record) => {
    workspaceKey = apiKeyItems('workspace', organizationId, record.id, { name: names.workspaceKeyName });
    return [
      putNew(toOrganizationItem({ id: organizationId, name, defaultWorkspaceId: record.id, createdAt: record.createdAt })),
      putNew(toPlanItem(defaultPlan(organizationId, record.createdAt))),
      putNew(emptyStorageItem(organizationId)),
      ...orgKey.items,
      ...workspaceKey.items,
    ];
  });
  return {
    organizationId,
    workspaceId: workspace.id,
    organizationApiKey: orgKey.issued,
    workspaceApiKey: workspaceKey!.issued,
  };
}

/**
 * A new active member of `workspaceId` with a verified email and no key (the local stack's seeded
 * owner, who signs in by email link). Nothing when the address is a member or invitee already.
 */
export async function addVerifiedMember(workspaceId: string, email: string, role: Role, name?: string): Promise<string> {
  const now = Date.now();
  const address = email.toLowerCase();
  await ensureMemberCounts(workspaceId);
  const existingId = await findUserIdByEmail(address);
  if (existingId !== undefined && (await readMember(workspaceId, existingId))) return existingId;
  const items: TransactItem[] = [];
  let userId = existingId;
  if (userId === undefined) {
    const user: User & { email: string } = {
      id: randomUUID(),
      name: name ?? address.split('@')[0] ?? address,
      email: address,
      emailVerified: true,
      kind: 'member',
      createdAt: now,
      modifiedAt: now,
    };
    userId = user.id;
    items.push(putNew(toUserItem(user)), putNew(toUserEmailItem(user)));
  }
  items.push(...newMemberItems({ workspaceId, userId, role, createdAt: now, status: 'active' }));
  if ((await transactUnlessConditionFails(items)) !== undefined)
    throw new ConflictError(`Workspace ${workspaceId} changed meanwhile; ${address} was not added.`);
  return userId;
}

/** An organization-scoped key, labelled `name` when given. */
export async function createOrganizationKey(organizationId: string, name?: string): Promise<IssuedKey> {
  if (!(await getOrganization(organizationId))) throw new NotFoundError(`Organization ${organizationId} does not exist.`);
  const key = apiKeyItems('organization', organizationId, undefined, { name });
  await transact(key.items);
  return key.issued;
}

/**
 * A workspace-scoped key. With an email it acts as that workspace member (created when new, email
 * verified, with the role given, else `owner` for a workspace's first member and `contributor`
 * after; an invitee becomes active); without, as its own API user (which acts as an owner). `name`
 * labels the key; its own API user is named after it, a member keeps the member's name.
 */
export async function createWorkspaceKey(workspaceId: string, member?: { email: string; role?: Role }, name?: string): Promise<IssuedKey> {
  const workspace = await getWorkspace(workspaceId);
  if (!workspace) throw new NotFoundError(`Workspace ${workspaceId} does not exist.`);
  if (!member) {
    const key = apiKeyItems('workspace', workspace.organizationId, workspaceId, { name });
    await transact(key.items);
    return key.issued;
  }
  const items: TransactItem[] = [];
  const now = Date.now();
  let userId = await findUserIdByEmail(member.email);
  if (!userId) {
    const user: User & { email: string } = {
      id: randomUUID(),
      name: member.email.split('@')[0] ?? member.email,
      email: member.email.toLowerCase(),
      emailVerified: true,
      kind: 'member',
      createdAt: now,
      modifiedAt: now,
    };
    userId = user.id;
    items.push(putNew(toUserItem(user)), putNew(toUserEmailItem(user)));
  } else if ((await getUser(userId))?.emailVerified === false) {
    // An invitee's address: the operator who makes a key for it vouches for it.
    items.push(verifyUserEmailItem(userId));
  }
  // An existing membership keeps its role: the key joins the member, it does not re-invite them; an
  // invitee becomes an active member. Both move the workspace's member counters in the same transaction.
  await ensureMemberCounts(workspaceId);
  const existing = await readMember(workspaceId, userId);
  if (existing && member.role !== undefined && member.role !== existing.role) {
    // A key is not the place to change a role: PATCH /users/{userId}/role keeps the last owner and who may grant what.
    throw new ConflictError(
      `${member.email} is already ${statusOf(existing) === 'invited' ? 'invited to' : 'a member of'} workspace ${workspaceId} as ${existing.role}; ` +
        `leave out --role, or change the role with PATCH /users/${userId}/role first. No key was made.`,
    );
  }
  if (!existing) {
    const role = member.role ?? ((await hasMembers(workspaceId)) ? 'contributor' : 'owner');
    items.push(...newMemberItems({ workspaceId, userId, role, createdAt: now, status: 'active' }));
  } else if (statusOf(existing) === 'invited') {
    items.push(...activateMemberItems(existing));
  }
  if (!existing || statusOf(existing) === 'invited') {
    // A new membership, maybe of an address removed before: the old membership's keys stay dead (its
    // removal revoked them; this also catches one made while the removal ran). Only the new key acts.
    const leftovers = await liveMemberKeyIds(workspace.organizationId, workspaceId, userId);
    items.push(...leftovers.map((keyId) => revokeApiKeyItem(keyId, new Date(now).toISOString())));
  }
  const key = apiKeyItems('workspace', workspace.organizationId, workspaceId, { actingUserId: userId, name });
  if ((await transactUnlessConditionFails([...items, ...key.items])) !== undefined) {
    throw new ConflictError(`Workspace ${workspaceId} changed meanwhile or has ${MAX_MEMBERS} members already; no key was made.`);
  }
  return key.issued;
}
