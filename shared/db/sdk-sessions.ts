import { createHash } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { isConditionFailure } from './core/errors.js';
import { TABLE } from './core/table.js';
import { putNew, tryTransact } from './core/transact.js';

/**
 * A single-use SDK exchange session (`POST /auth/sdk-exchange` with `state`): the answer, waiting
 * for the embedding page to collect it once with `GET /auth/sdk-exchange/result`. Keyed by a
 * SHA-256 of the state, so the table never holds a usable nonce. The read that delivers it drops the
 * answer and keeps the item, marked consumed, for `CONSUMED_STATE_KEPT_MS`, so the state cannot be
 * armed again; the table's TTL removes it after that.
 */
export interface SdkSessionRecord<A> {
  publicKey: string;
  markupId: string;
  sdkOrigin: string;
  /** Epoch milliseconds after which the session is never delivered. */
  expiresAt: number;
  answer: A;
}

/** How long a delivered state stays refused (409) before the table's TTL may forget it. */
export const CONSUMED_STATE_KEPT_MS = 24 * 60 * 60 * 1000;

export const sdkSessionKey = (state: string) => ({
  PK: `SDKSTATE#${createHash('sha256').update(state, 'utf8').digest('base64url')}`,
  SK: 'SDKSTATE',
});

/** Records a session under `state`; false (nothing written) when that state was used before and is still kept. */
export async function insertSdkSession<A>(state: string, record: SdkSessionRecord<A>): Promise<boolean> {
  const item = {
    ...sdkSessionKey(state),
    entity: 'SdkSession',
    ...record,
    // DynamoDB TTL deletes within days, not on time: `expiresAt` is what the read checks.
    [TABLE.ttlAttribute]: Math.ceil(record.expiresAt / 1000),
  };
  return (await tryTransact([putNew(item)])).length === 0;
}

/**
 * Takes the session under `state` if it matches `publicKey`, `markupId` and `origin`, has not
 * expired at `now` and was not taken before: one conditional UpdateItem that removes the answer and
 * marks the item consumed, so of any number of concurrent callers exactly one gets it, a caller
 * whose condition fails consumes nothing, and `insertSdkSession` refuses the state while the item is
 * kept. Undefined on any failure, without saying which check failed.
 */
export async function takeSdkSession<A>(
  state: string,
  expected: { publicKey: string; markupId: string; origin: string; now: number },
): Promise<SdkSessionRecord<A> | undefined> {
  try {
    const result = await getDb().send(
      new UpdateCommand({
        TableName: getConfig().tableName,
        Key: sdkSessionKey(state),
        UpdateExpression: 'SET consumedAt = :now, #ttl = :keptUntil REMOVE answer',
        ConditionExpression:
          'attribute_exists(PK) AND attribute_not_exists(consumedAt) AND publicKey = :publicKey AND markupId = :markupId AND sdkOrigin = :origin AND expiresAt > :now',
        ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
        ExpressionAttributeValues: {
          ':publicKey': expected.publicKey,
          ':markupId': expected.markupId,
          ':origin': expected.origin,
          ':now': expected.now,
          ':keptUntil': Math.ceil((expected.now + CONSUMED_STATE_KEPT_MS) / 1000),
        },
        ReturnValues: 'ALL_OLD',
      }),
    );
    const item = result.Attributes;
    if (!item) return undefined;
    return {
      publicKey: item.publicKey,
      markupId: item.markupId,
      sdkOrigin: item.sdkOrigin,
      expiresAt: item.expiresAt,
      answer: item.answer as A,
    };
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}
