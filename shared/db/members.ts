import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { queryPrefix } from './core/paging.js';
import { batchGet, putNew, transactUnlessConditionFails, updateIfConditionHolds, type TransactItem } from './core/transact.js';
import {
  memberKey,
  membershipsPartitionOf,
  statusOf,
  toMemberItem,
  toUserEmailItem,
  toUserItem,
  userEmailKey,
  userKey,
  type Member,
  type Role,
  type User,
} from './users.js';

/**
 * Members and invitees of a workspace are capped, so `GET /users` answers them all in one bounded
 * read (one Query of at most this many small records and a BatchGet of their users). Every write
 * that adds one moves `memberCount` on the workspace's counter record under the condition that the
 * cap still holds.
 */
export const MAX_MEMBERS = 500;

/** The workspace's member counters: `memberCount` (members and invitees), `ownerCount` (ACTIVE owners). */
export const memberCountsKey = (workspaceId: string) => ({ PK: `WS#${workspaceId}`, SK: 'MEMBERCOUNTS' });

export interface MemberCounts {
  memberCount: number;
  ownerCount: number;
}

/** Whether a member counts toward `ownerCount`: only active owners can act as one. */
const countsAsOwner = (member: Pick<Member, 'role' | 'status'>) => member.role === 'owner' && statusOf(member) === 'active';

async function getMemberCounts(workspaceId: string): Promise<MemberCounts | undefined> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: memberCountsKey(workspaceId), ConsistentRead: true }),
  );
  return result.Item ? { memberCount: result.Item.memberCount as number, ownerCount: result.Item.ownerCount as number } : undefined;
}

/** Every member and invitee of a workspace (consistent; bounded by MAX_MEMBERS). */
export async function listMembers(workspaceId: string): Promise<Member[]> {
  const items = await queryPrefix(memberKey(workspaceId, '').PK, memberKey(workspaceId, '').SK, { consistent: true });
  return items as unknown as Member[];
}

/** Every member and invitee of a workspace with their user records (consistent reads: an invitee shows at once). */
export async function listMembersWithUsers(workspaceId: string): Promise<{ member: Member; user: User | undefined }[]> {
  const members = await listMembers(workspaceId);
  const users = (await batchGet(
    members.map((member) => userKey(member.userId)),
    { consistent: true },
  )) as unknown as User[];
  const byId = new Map(users.map((user) => [user.id, user]));
  return members.map((member) => ({ member, user: byId.get(member.userId) }));
}

/**
 * Up to `limit` of a user's member records (active and invited) across every workspace: one Query
 * of GSI1 (eventually consistent; each caller that writes reads its record again consistently).
 */
export async function membershipsOf(userId: string, limit: number): Promise<Member[]> {
  const result = await getDb().send(
    new QueryCommand({
      TableName: getConfig().tableName,
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': membershipsPartitionOf(userId) },
      Limit: limit,
    }),
  );
  return (result.Items ?? []) as unknown as Member[];
}

/** One member record, read consistently (the read a conditional change is based on). */
export async function readMember(workspaceId: string, userId: string): Promise<Member | undefined> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: memberKey(workspaceId, userId), ConsistentRead: true }),
  );
  return result.Item as Member | undefined;
}

/** The user ids of those `emails` (lower-case) that belong to a user, by email; one consistent BatchGet. */
export async function findUserIdsByEmails(emails: readonly string[]): Promise<Map<string, string>> {
  const items = await batchGet(emails.map(userEmailKey), { consistent: true });
  return new Map(items.map((item) => [String(item.PK).slice('EMAIL#'.length), item.userId as string]));
}

/** The member records of `userIds` in a workspace (those that exist), by user id; one consistent BatchGet. */
export async function findMembers(workspaceId: string, userIds: readonly string[]): Promise<Map<string, Member>> {
  const items = (await batchGet(
    userIds.map((userId) => memberKey(workspaceId, userId)),
    { consistent: true },
  )) as unknown as Member[];
  return new Map(items.map((member) => [member.userId, member]));
}

/**
 * The workspace's counters, created from its member records the first time they are needed
 * (workspaces whose members predate them). Safe against concurrent member writes: every write that
 * adds, removes or re-roles a member is conditioned on the counter record existing, so none can land
 * between the count and the conditional put that records it.
 */
export async function ensureMemberCounts(workspaceId: string): Promise<MemberCounts> {
  const existing = await getMemberCounts(workspaceId);
  if (existing) return existing;
  const members = await listMembers(workspaceId);
  const counts = { memberCount: members.length, ownerCount: members.filter(countsAsOwner).length };
  const created = await updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: memberCountsKey(workspaceId),
    UpdateExpression: 'SET entity = :entity, memberCount = :members, ownerCount = :owners',
    ConditionExpression: 'attribute_not_exists(PK)',
    ExpressionAttributeValues: { ':entity': 'MemberCounts', ':members': counts.memberCount, ':owners': counts.ownerCount },
  });
  return created ? counts : ((await getMemberCounts(workspaceId)) ?? counts);
}

/**
 * Moves the counters by `members` and `owners` in a transaction. Adding members needs room under
 * MAX_MEMBERS; taking an owner away needs another owner to remain (`ownerCount >= 1 - owners`), so
 * two owners demoting or removing each other at once cannot both succeed.
 */
function memberCountChange(workspaceId: string, change: { members?: number; owners?: number }): TransactItem {
  const members = change.members ?? 0;
  const owners = change.owners ?? 0;
  const conditions = ['attribute_exists(PK)'];
  const values: Record<string, number> = { ':members': members, ':owners': owners };
  if (members > 0) {
    conditions.push('memberCount <= :room');
    values[':room'] = MAX_MEMBERS - members;
  }
  if (owners < 0) {
    conditions.push('ownerCount >= :needed');
    values[':needed'] = 1 - owners;
  }
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: memberCountsKey(workspaceId),
      UpdateExpression: 'ADD memberCount :members, ownerCount :owners',
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeValues: values,
    },
  };
}

/** A member record's key with the condition that it is still as read (role and status). */
function asRead(member: Member) {
  const active = statusOf(member) === 'active';
  return {
    TableName: getConfig().tableName,
    Key: memberKey(member.workspaceId, member.userId),
    ConditionExpression: `attribute_exists(PK) AND #role = :readRole AND ${active ? '(attribute_not_exists(#status) OR #status = :active)' : '#status = :invited'}`,
    ExpressionAttributeNames: { '#role': 'role', '#status': 'status' },
    ExpressionAttributeValues: { ':readRole': member.role, ...(active ? { ':active': 'active' } : { ':invited': 'invited' }) } as Record<
      string,
      unknown
    >,
  };
}

/** A transaction item setting attributes of a member record that is still as read (`#role`, `#status` may be named). */
function memberChange(member: Member, updateExpression: string, values: Record<string, unknown>): TransactItem {
  const read = asRead(member);
  return {
    Update: { ...read, UpdateExpression: updateExpression, ExpressionAttributeValues: { ...read.ExpressionAttributeValues, ...values } },
  };
}

/** Transaction items adding a member (active or invited) with the counters: conditional on the cap. */
export function newMemberItems(member: Member): TransactItem[] {
  return [putNew(toMemberItem(member)), memberCountChange(member.workspaceId, { members: 1, owners: countsAsOwner(member) ? 1 : 0 })];
}

/** A transaction item marking a user's email verified (an invitee for whom a member key was made). */
export function verifyUserEmailItem(userId: string): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: userKey(userId),
      UpdateExpression: 'SET emailVerified = :verified',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':verified': true },
    },
  };
}

/** Transaction items turning an invitee into an active member (a key was made for them), with the owner counter. */
export function activateMemberItems(member: Member): TransactItem[] {
  const items = [memberChange(member, 'SET #status = :activeNow', { ':activeNow': 'active' })];
  if (member.role === 'owner') items.push(memberCountChange(member.workspaceId, { owners: 1 }));
  return items;
}

export type MemberWriteResult = 'ok' | 'stale' | 'member-limit' | 'last-owner';

/** What a failed counter condition meant: the cap, or the last owner (the record itself exists by then). */
function counterResult(failed: number | undefined, counterIndex: number, cause: 'member-limit' | 'last-owner'): MemberWriteResult {
  if (failed === undefined) return 'ok';
  return failed === counterIndex ? cause : 'stale';
}

/**
 * One batch of invitations in one transaction: for each, the new User and its email claim when the
 * person is new, and the invited Member record; the member counter moves by the batch, under the cap.
 * `stale` when someone else wrote one of these records meanwhile (read again and retry).
 */
export async function insertInvitations(
  workspaceId: string,
  invitations: { newUser?: User & { email: string }; member: Member }[],
): Promise<MemberWriteResult> {
  const items: TransactItem[] = [memberCountChange(workspaceId, { members: invitations.length })];
  for (const { newUser, member } of invitations) {
    if (newUser) items.push(putNew(toUserItem(newUser)), putNew(toUserEmailItem(newUser)));
    items.push(putNew(toMemberItem(member)));
  }
  return counterResult(await transactUnlessConditionFails(items), 0, 'member-limit');
}

/** Changes a member's role if the record is still as read; taking `owner` from an active owner needs another to remain. */
export async function updateMemberRole(member: Member, role: Role): Promise<MemberWriteResult> {
  const owners = statusOf(member) !== 'active' ? 0 : (role === 'owner' ? 1 : 0) - (member.role === 'owner' ? 1 : 0);
  const items = [memberChange(member, 'SET #role = :role', { ':role': role }), memberCountChange(member.workspaceId, { owners })];
  return counterResult(await transactUnlessConditionFails(items), 1, 'last-owner');
}

/**
 * Removes a member or invitee if the record is still as read; removing an active owner needs another
 * to remain. `also` (unconditional writes, such as revoking the member's keys) commits with it.
 */
export async function deleteMember(member: Member, also: TransactItem[] = []): Promise<MemberWriteResult> {
  const items: TransactItem[] = [
    { Delete: asRead(member) },
    memberCountChange(member.workspaceId, { members: -1, owners: countsAsOwner(member) ? -1 : 0 }),
    ...also,
  ];
  return counterResult(await transactUnlessConditionFails(items), 1, 'last-owner');
}

/**
 * Takes the lease to send an invitee's email: true for exactly one caller while it is unsent and no
 * other request is sending it (or that one's lease, `leaseMs`, ran out: it died mid-send).
 */
export async function claimInvitationEmail(workspaceId: string, userId: string, now: number, leaseMs: number): Promise<boolean> {
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: memberKey(workspaceId, userId),
    UpdateExpression: 'SET invitationSendingSince = :now',
    ConditionExpression:
      '#status = :invited AND attribute_not_exists(invitationSentAt) AND (attribute_not_exists(invitationSendingSince) OR invitationSendingSince < :expired)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':now': now, ':invited': 'invited', ':expired': now - leaseMs },
  });
}

/** Ends the lease of `claimInvitationEmail`: records `sentAt` when the email went out, else leaves it unsent for a retry. */
export async function finishInvitationEmail(workspaceId: string, userId: string, sentAt: number | undefined): Promise<void> {
  await updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: memberKey(workspaceId, userId),
    UpdateExpression:
      sentAt === undefined ? 'REMOVE invitationSendingSince' : 'SET invitationSentAt = :sentAt REMOVE invitationSendingSince',
    ConditionExpression: 'attribute_exists(PK)',
    ...(sentAt === undefined ? {} : { ExpressionAttributeValues: { ':sentAt': sentAt } }),
  });
}
