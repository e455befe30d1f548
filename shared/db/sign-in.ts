import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { isConditionFailure } from './core/errors.js';
import { TABLE } from './core/table.js';
import { put, putNew, transact } from './core/transact.js';

/**
 * The records of sign-in by email link (docs/review-app.md): single-use codes, rate-limit windows
 * and revoked session tokens. Each is one small item that expires with DynamoDB TTL; every check
 * compares the stored millisecond expiry itself, since TTL removes items within days, not on time.
 */

/** SHA-256 of a sign-in code: the table never holds a code that works. */
export const hashSignInCode = (code: string) => createHash('sha256').update(code, 'utf8').digest('base64url');

export const signInCodeKey = (codeHash: string) => ({ PK: `SIGNIN#${codeHash}`, SK: 'SIGNIN' });

/** A rate-limit window: `subject` names what is limited (`email:<sha256>`, `ip:<address>`), `windowStart` its start (epoch ms). */
export const rateLimitKey = (subject: string, windowStart: number) => ({ PK: `RATE#${subject}`, SK: `WINDOW#${windowStart}` });

/** A revoked session token, by its `jti`. */
export const revokedSessionKey = (sessionId: string) => ({ PK: `SESSIONREVOKED#${sessionId}`, SK: 'SESSIONREVOKED' });

const ttlOf = (expiresAt: number) => ({ [TABLE.ttlAttribute]: Math.ceil(expiresAt / 1000) });

export interface SignInCodeRecord {
  userId: string;
  email: string;
  createdAt: number;
  /** Epoch milliseconds after which the code is refused. */
  expiresAt: number;
}

/** Stores a code by its hash (a 256-bit random code never repeats; the condition only makes sure). */
export async function insertSignInCode(codeHash: string, record: SignInCodeRecord): Promise<void> {
  await transact([putNew({ ...signInCodeKey(codeHash), entity: 'SignInCode', ...record, ...ttlOf(record.expiresAt) })]);
}

/**
 * Takes the code: one conditional DeleteItem, so of any number of concurrent callers exactly one
 * gets it, and an expired code is never taken. Undefined when it is unknown, used or expired,
 * without saying which.
 */
export async function takeSignInCode(codeHash: string, now: number): Promise<SignInCodeRecord | undefined> {
  try {
    const result = await getDb().send(
      new DeleteCommand({
        TableName: getConfig().tableName,
        Key: signInCodeKey(codeHash),
        ConditionExpression: 'attribute_exists(PK) AND expiresAt > :now',
        ExpressionAttributeValues: { ':now': now },
        ReturnValues: 'ALL_OLD',
      }),
    );
    const item = result.Attributes;
    if (!item) return undefined;
    return {
      userId: item.userId as string,
      email: item.email as string,
      createdAt: item.createdAt as number,
      expiresAt: item.expiresAt as number,
    };
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Moves a stored code's expiry (tests: a code that expired without waiting 15 minutes). Local stack only. */
export async function setSignInCodeExpiry(codeHash: string, expiresAt: number): Promise<void> {
  if (getConfig().mode !== 'local') throw new Error('Sign-in codes can be aged only on the local stack (tests).');
  await getDb().send(
    new UpdateCommand({
      TableName: getConfig().tableName,
      Key: signInCodeKey(codeHash),
      UpdateExpression: 'SET expiresAt = :expiresAt',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':expiresAt': expiresAt },
    }),
  );
}

/**
 * Counts one more request in `subject`'s current window and answers the count after it: one
 * UpdateItem (ADD), whatever the count, so a flood costs one small write per request and no read.
 * The item expires with its window.
 */
export async function countInWindow(subject: string, windowStart: number, windowMs: number): Promise<number> {
  const result = await getDb().send(
    new UpdateCommand({
      TableName: getConfig().tableName,
      Key: rateLimitKey(subject, windowStart),
      UpdateExpression: 'ADD #count :one SET entity = :entity, #ttl = :ttl',
      ExpressionAttributeNames: { '#count': 'count', '#ttl': TABLE.ttlAttribute },
      ExpressionAttributeValues: { ':one': 1, ':entity': 'RateLimitWindow', ':ttl': Math.ceil((windowStart + windowMs) / 1000) },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(result.Attributes?.count ?? 1);
}

/** Records a session token revoked until it would have expired (`expiresAt`, epoch ms). */
export async function revokeSession(sessionId: string, expiresAt: number, revokedAt: number): Promise<void> {
  await transact([put({ ...revokedSessionKey(sessionId), entity: 'RevokedSession', revokedAt, expiresAt, ...ttlOf(expiresAt) })]);
}

/** Whether a session token was revoked (one strongly consistent GetItem: a sign-out holds from its answer on). */
export async function isSessionRevoked(sessionId: string): Promise<boolean> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: revokedSessionKey(sessionId), ConsistentRead: true }),
  );
  return result.Item !== undefined;
}
