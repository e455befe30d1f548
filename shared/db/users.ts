import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { batchGet } from './core/transact.js';
import { MEMBER_STATUSES, ROLES } from '../schemas/users.js';

export { MEMBER_STATUSES, ROLES };
export type Role = (typeof ROLES)[number];

/**
 * A user: an API key's own API user, a workspace member, or an external (feedback) user of one
 * workspace (`external-users.ts`, shown as a guest). Times are millisecond numbers.
 */
export interface User {
  id: string;
  name: string;
  email: string | null;
  emailVerified: boolean;
  kind: 'api' | 'member' | 'external';
  createdAt: number;
  modifiedAt: number;
}

export type MemberStatus = (typeof MEMBER_STATUSES)[number];

export interface Member {
  workspaceId: string;
  userId: string;
  role: Role;
  createdAt: number;
  /** `invited` until the person holds a key of the workspace; records written before invitations have none: `active`. */
  status?: MemberStatus;
  /** Who invited them and when (invitees only). */
  invitedBy?: string;
  invitedAt?: number;
  /** When the invitation email went out; absent while it has not (a re-invite sends it again). */
  invitationSentAt?: number;
  /** A request is sending the invitation email since then (a lease, so two re-invites send it once). */
  invitationSendingSince?: number;
}

/** A member record's status; records from before invitations are active. */
export const statusOf = (member: Pick<Member, 'status'>): MemberStatus => member.status ?? 'active';

export const userKey = (userId: string) => ({ PK: `USER#${userId}`, SK: 'USER' });
/** Makes an email address unique across users. */
export const userEmailKey = (email: string) => ({ PK: `EMAIL#${email.toLowerCase()}`, SK: 'EMAIL' });
export const memberKey = (workspaceId: string, userId: string) => ({ PK: `WS#${workspaceId}`, SK: `MEMBER#${userId}` });

export function toUserItem(user: User): Record<string, unknown> {
  return { ...userKey(user.id), entity: 'User', ...user };
}

export function toUserEmailItem(user: User & { email: string }): Record<string, unknown> {
  return { ...userEmailKey(user.email), entity: 'UserEmail', userId: user.id };
}

/** The GSI1 partition of a user's member records (`membershipsOf` in members.ts reads it). */
export const membershipsPartitionOf = (userId: string) => `USER#${userId}#MEMBERSHIPS`;

export function toMemberItem(member: Member): Record<string, unknown> {
  return {
    ...memberKey(member.workspaceId, member.userId),
    entity: 'Member',
    ...member,
    GSI1PK: membershipsPartitionOf(member.userId),
    GSI1SK: member.workspaceId,
  };
}

export async function getUser(userId: string): Promise<User | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: userKey(userId) }));
  return result.Item as User | undefined;
}

export async function findUserIdByEmail(email: string): Promise<string | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: userEmailKey(email) }));
  return result.Item?.userId as string | undefined;
}

export async function getMember(workspaceId: string, userId: string): Promise<Member | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: memberKey(workspaceId, userId) }));
  return result.Item as Member | undefined;
}

/** Whether the workspace has a member yet (a one-item Query of its `MEMBER#` records). */
export async function hasMembers(workspaceId: string): Promise<boolean> {
  const result = await getDb().send(
    new QueryCommand({
      TableName: getConfig().tableName,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :member)',
      ExpressionAttributeValues: { ':pk': memberKey(workspaceId, '').PK, ':member': 'MEMBER#' },
      Limit: 1,
    }),
  );
  return (result.Items?.length ?? 0) > 0;
}

/** Users by id, in no particular order; unknown ids are skipped. */
export async function getUsers(userIds: readonly string[]): Promise<User[]> {
  return (await batchGet(userIds.map(userKey))) as unknown as User[];
}
