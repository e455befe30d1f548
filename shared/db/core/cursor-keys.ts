import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../../config.js';
import { getDb } from '../../clients.js';
import { isConditionFailure } from './errors.js';

/**
 * The HMAC key that makes cursors tamper-evident. It lives in the table (made on first use with a
 * conditional put), so no secret sits in an environment variable or the repository.
 */
export const cursorKeyKey = () => ({ PK: 'CONFIG', SK: 'CURSOR_KEY' });

let cached: Promise<Buffer> | undefined;

export function getCursorKey(): Promise<Buffer> {
  cached ??= loadOrCreate().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

async function loadOrCreate(): Promise<Buffer> {
  const db = getDb();
  const TableName = getConfig().tableName;
  const existing = await db.send(new GetCommand({ TableName, Key: cursorKeyKey(), ConsistentRead: true }));
  if (existing.Item) return Buffer.from(existing.Item.secret as string, 'base64');
  const secret = randomBytes(32).toString('base64');
  try {
    await db.send(
      new PutCommand({
        TableName,
        Item: { ...cursorKeyKey(), entity: 'CursorKey', secret, createdAt: new Date().toISOString() },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    return Buffer.from(secret, 'base64');
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const raced = await db.send(new GetCommand({ TableName, Key: cursorKeyKey(), ConsistentRead: true }));
    return Buffer.from(raced.Item?.secret as string, 'base64');
  }
}

export function forgetCursorKey(): void {
  cached = undefined;
}
