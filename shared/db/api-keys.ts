import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { queryAll } from './core/paging.js';
import { updateIfConditionHolds, type TransactItem } from './core/transact.js';

export interface ApiKeyRecord {
  keyId: string;
  secretHash: string;
  scope: 'organization' | 'workspace';
  organizationId: string;
  workspaceId?: string;
  /** The user the key acts as. */
  userId: string;
  /** True when the user is a workspace member (the key acts with the member's role), false for the key's own API user. */
  actsAsMember?: boolean;
  /** The label an operator gave the key (`admin key create --name`); its own API user is named after it. */
  name?: string;
  createdAt: string;
  revokedAt?: string;
}

export const apiKeyKey = (keyId: string) => ({ PK: `APIKEY#${keyId}`, SK: 'APIKEY' });
const organizationKeysPartition = (organizationId: string) => `ORG#${organizationId}#APIKEYS`;

export function toApiKeyItem(record: ApiKeyRecord): Record<string, unknown> {
  return {
    ...apiKeyKey(record.keyId),
    entity: 'ApiKey',
    ...record,
    GSI1PK: organizationKeysPartition(record.organizationId),
    GSI1SK: record.createdAt + '#' + record.keyId,
  };
}

export async function getApiKey(keyId: string): Promise<ApiKeyRecord | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: apiKeyKey(keyId) }));
  return result.Item as ApiKeyRecord | undefined;
}

/** Revokes a key; true when it existed and was live. */
export async function revokeApiKey(keyId: string, at = new Date().toISOString()): Promise<boolean> {
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: apiKeyKey(keyId),
    UpdateExpression: 'SET revokedAt = :at',
    ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(revokedAt)',
    ExpressionAttributeValues: { ':at': at },
  });
}

/**
 * The live keys made for member `userId` of workspace `workspaceId` (`admin key create --email`).
 * Pages through the organization's keys, which only operators make: a few per member.
 */
export async function liveMemberKeyIds(organizationId: string, workspaceId: string, userId: string): Promise<string[]> {
  const keyIds: string[] = [];
  for await (const item of queryAll('GSI1', organizationKeysPartition(organizationId))) {
    const key = item as unknown as ApiKeyRecord;
    if (
      key.scope === 'workspace' &&
      key.workspaceId === workspaceId &&
      key.userId === userId &&
      key.actsAsMember !== false &&
      !key.revokedAt
    )
      keyIds.push(key.keyId);
  }
  return keyIds;
}

/**
 * Revokes a key inside another write's transaction: unconditional (a key already revoked keeps its
 * first time), so it adds no condition that could cancel the write it rides on.
 */
export function revokeApiKeyItem(keyId: string, at: string): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: apiKeyKey(keyId),
      UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :at)',
      ExpressionAttributeValues: { ':at': at },
    },
  };
}

/** Every key of an organization (admin tooling; pages through all of them). */
export async function listApiKeys(organizationId: string): Promise<Omit<ApiKeyRecord, 'secretHash'>[]> {
  const keys: Omit<ApiKeyRecord, 'secretHash'>[] = [];
  for await (const item of queryAll('GSI1', organizationKeysPartition(organizationId))) {
    const { keyId, name, scope, workspaceId, userId, createdAt, revokedAt } = item as unknown as ApiKeyRecord;
    keys.push({ keyId, name, scope, organizationId, workspaceId, userId, createdAt, revokedAt });
  }
  return keys;
}
