import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { isConditionFailure } from './core/errors.js';
import { TABLE } from './core/table.js';

/** Bodies are kept as long as their events (30 days), so every retry finds the first build. */
const RETENTION_SECONDS = 30 * 24 * 3600;

export const eventBodyKey = (eventId: string) => ({ PK: `EVENT#${eventId}`, SK: 'BODY' });

/**
 * Stores an event's delivery body unless one is stored already, and answers the stored one: the
 * first builder wins and a racing second builder gets the winner's bytes, so every attempt and
 * every registration sends the same body. Kept raw-deflated (a PDF markup lists a presigned URL
 * per page: hundreds of KB of JSON that compress well under DynamoDB's 400 KB item limit).
 */
export async function storeEventBodyOnce(eventId: string, body: string): Promise<string> {
  const item = {
    ...eventBodyKey(eventId),
    entity: 'EventBody',
    body: deflateRawSync(Buffer.from(body, 'utf8')),
    [TABLE.ttlAttribute]: expiresAtEpoch(),
  };
  try {
    await getDb().send(new PutCommand({ TableName: getConfig().tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' }));
    return body;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const stored = await getStoredEventBody(eventId);
    if (stored === undefined) throw new Error(`The body of event ${eventId} was stored and is gone.`, { cause: error });
    return stored;
  }
}

/** The stored body of an event, or undefined before its first delivery (consistent read). */
export async function getStoredEventBody(eventId: string): Promise<string | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: eventBodyKey(eventId), ConsistentRead: true }));
  const stored = result.Item?.body as Uint8Array | undefined;
  return stored ? inflateRawSync(stored).toString('utf8') : undefined;
}

const expiresAtEpoch = () => Math.floor(Date.now() / 1000) + RETENTION_SECONDS;
