import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { isConditionFailure } from './core/errors.js';
import { TABLE } from './core/table.js';

/**
 * One `Idempotency-Key` of one caller (issue 17, item 4): who holds it while the request runs, and
 * afterwards the response to replay. Keyed by the caller's scope (its credential: an API key id, or
 * an end user's User record for exchange tokens, which are re-minted every few minutes) and a
 * SHA-256 of the key, so no client string reaches the key space and a `#` in a key cannot forge
 * another scope. Each key is its own partition: no hot partition however many keys a caller sends.
 */
export interface IdempotencyRecord {
  status: 'inProgress' | 'completed';
  /** The route key it was first used on (for logs and operators; the fingerprint covers it). */
  routeKey: string;
  /** SHA-256 of the request it was first used with (method, path, query string, body bytes). */
  fingerprint: string;
  /** The request id of the request that holds it; only that request completes or releases it. */
  token: string;
  /** Epoch ms after which an in-progress record may be taken over (its Lambda died or timed out). */
  lockedUntil?: number;
  createdAt: string;
  /** The completed response (`Reply`) as JSON text, replayed byte for byte. */
  reply?: string;
  /** TTL (epoch seconds): the end of the replay window. Reads check it, since TTL deletes late. */
  expiresAtEpoch: number;
}

export const idempotencyKey = (scope: string, key: string) => ({
  PK: `IDEMPOTENCY#${scope}#${createHash('sha256').update(key, 'utf8').digest('base64url')}`,
  SK: 'IDEMPOTENCY',
});

export type ClaimResult = { claimed: true } | { claimed: false; existing: IdempotencyRecord | undefined };

/**
 * Takes the key for a request: one conditional PutItem that succeeds when the key is new, its
 * window has passed (TTL not yet run) or an in-progress holder's lock expired. Otherwise nothing is
 * written and the record that stands is answered (from the failed condition, so a replay costs one
 * call); undefined when it went between the write and the read (its holder released it).
 */
export async function claimIdempotencyKey(
  scope: string,
  key: string,
  claim: Pick<IdempotencyRecord, 'routeKey' | 'fingerprint' | 'token' | 'lockedUntil' | 'expiresAtEpoch'>,
  now: number,
): Promise<ClaimResult> {
  const Key = idempotencyKey(scope, key);
  const item = { ...Key, entity: 'IdempotencyRecord', status: 'inProgress', createdAt: new Date(now).toISOString(), ...claim };
  try {
    await getDb().send(
      new PutCommand({
        TableName: getConfig().tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(PK) OR #ttl < :nowEpoch OR (#status = :inProgress AND lockedUntil < :now)',
        ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute, '#status': 'status' },
        ExpressionAttributeValues: { ':nowEpoch': Math.floor(now / 1000), ':inProgress': 'inProgress', ':now': now },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { claimed: true };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const old =
      error instanceof ConditionalCheckFailedException && error.Item ? (unmarshall(error.Item) as Record<string, unknown>) : undefined;
    const existing = old ?? (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key, ConsistentRead: true }))).Item;
    return { claimed: false, existing: existing ? toRecord(existing) : undefined };
  }
}

/** Stores the response of the request that holds the key; false when it no longer holds it (its lock expired and another took over). */
export async function completeIdempotencyKey(scope: string, key: string, token: string, reply: string): Promise<boolean> {
  try {
    await getDb().send(
      new UpdateCommand({
        TableName: getConfig().tableName,
        Key: idempotencyKey(scope, key),
        UpdateExpression: 'SET #status = :completed, reply = :reply REMOVE lockedUntil',
        ConditionExpression: '#status = :inProgress AND #token = :token',
        ExpressionAttributeNames: { '#status': 'status', '#token': 'token' },
        ExpressionAttributeValues: { ':completed': 'completed', ':inProgress': 'inProgress', ':reply': reply, ':token': token },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Deletes the key's record if this request still holds it, so a retry with the same key runs anew. */
export async function releaseIdempotencyKey(scope: string, key: string, token: string): Promise<void> {
  try {
    await getDb().send(
      new DeleteCommand({
        TableName: getConfig().tableName,
        Key: idempotencyKey(scope, key),
        ConditionExpression: '#status = :inProgress AND #token = :token',
        ExpressionAttributeNames: { '#status': 'status', '#token': 'token' },
        ExpressionAttributeValues: { ':inProgress': 'inProgress', ':token': token },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

function toRecord(item: Record<string, unknown>): IdempotencyRecord {
  return {
    status: item.status as IdempotencyRecord['status'],
    routeKey: item.routeKey as string,
    fingerprint: item.fingerprint as string,
    token: item.token as string,
    lockedUntil: item.lockedUntil as number | undefined,
    createdAt: item.createdAt as string,
    reply: item.reply as string | undefined,
    expiresAtEpoch: item[TABLE.ttlAttribute] as number,
  };
}
