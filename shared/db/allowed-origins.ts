import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import type { TransactItem } from './core/transact.js';

/**
 * The origin index behind CORS for embedded clients: per browser origin, how many live
 * installations list it. A browser on an origin is granted CORS while its count is above zero. The
 * count moves only inside the transactions that create and delete installations (`originWrites`),
 * so it can never disagree with the installations themselves; an origin whose last installation went
 * keeps its item with a zero count (a later installation counts it up again).
 */

export const allowedOriginKey = (origin: string) => ({ PK: `ORIGIN#${origin}`, SK: 'ORIGIN' });

/**
 * Transaction items that count each of `origins` (deduplicated: one transaction may touch an item
 * once) up (+1, an installation created) or down (-1, deleted). Invariant: an installation's delete
 * passes exactly the origins its create passed, so counts never go below zero.
 */
export function originWrites(origins: readonly string[], delta: 1 | -1): TransactItem[] {
  const tableName = getConfig().tableName;
  return [...new Set(origins)].map((origin) => ({
    Update: {
      TableName: tableName,
      Key: allowedOriginKey(origin),
      UpdateExpression: 'SET entity = :entity, origin = :origin ADD installations :delta',
      ExpressionAttributeValues: { ':entity': 'AllowedOrigin', ':origin': origin, ':delta': delta },
    },
  }));
}

/** Whether some live installation lists `origin` (one eventually consistent GetItem). */
export async function isOriginListed(origin: string): Promise<boolean> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: allowedOriginKey(origin), ProjectionExpression: 'installations' }),
  );
  const count = result.Item?.installations;
  return typeof count === 'number' && count > 0;
}

/**
 * The browser origins an installation admits: the SDK exchange checks `sdkOrigin` against them, and
 * the origin index (CORS, `shared/db/allowed-origins.ts`) counts them while the installation lives.
 *
 * `allowedOrigins` omitted (null) falls back to the SDK exchange defaults (spec, Installations): the
 * origin of the page the installation was created for (its `url`), where the embedded client is
 * expected to run; an installation with neither admits no browser origin, so nothing is open by
 * default. Both the creation and the deletion of an installation pass this same list.
 */
export function installationOrigins(installation: { allowedOrigins: readonly string[] | null; url?: string | null }): string[] {
  if (installation.allowedOrigins) return [...new Set(installation.allowedOrigins)];
  if (!installation.url) return [];
  try {
    const { protocol, origin } = new URL(installation.url);
    return protocol === 'http:' || protocol === 'https:' ? [origin] : [];
  } catch {
    return [];
  }
}
