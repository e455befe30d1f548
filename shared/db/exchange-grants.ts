import { externalUserKey } from './external-users.js';
import { installationKey } from './installations.js';
import { batchGet } from './core/transact.js';

/** What an exchange token names: its installation, workspace, external user and that user's User record. */
export interface ExchangeGrantRef {
  installationId: string;
  workspaceId: string;
  externalId: string;
  userId: string;
}

const keysOf = (grant: ExchangeGrantRef) => ({
  installation: installationKey(grant.installationId),
  externalUser: externalUserKey(grant.workspaceId, grant.externalId),
});

const isItemOf = (item: Record<string, unknown>, key: { PK: string; SK: string }) => item.PK === key.PK && item.SK === key.SK;

/**
 * Whether `items` (read strongly consistent) hold what the token stands for: its installation, of
 * its workspace, and its external user with its userId (an externalId deleted and made again is a
 * new user, whose old tokens stay dead).
 */
function isAlive(grant: ExchangeGrantRef, items: readonly Record<string, unknown>[]): boolean {
  const keys = keysOf(grant);
  const installation = items.find((item) => isItemOf(item, keys.installation));
  const externalUser = items.find((item) => isItemOf(item, keys.externalUser));
  return installation?.workspaceId === grant.workspaceId && externalUser?.userId === grant.userId;
}

/**
 * The liveness of an exchange token (DESIGN.md "Credentials die with what they stand for"): its
 * installation and external user in one strongly consistent BatchGetItem, so once a delete
 * answered, no request passes again.
 */
export async function isExchangeGrantAlive(grant: ExchangeGrantRef): Promise<boolean> {
  const keys = keysOf(grant);
  return isAlive(grant, await batchGet([keys.installation, keys.externalUser], { consistent: true }));
}

/**
 * The item under `key` and the liveness of an exchange token in the same BatchGetItem (all three
 * strongly consistent): the request's own first read of its markup carries the check, so it costs
 * no call of its own.
 */
export async function readWithExchangeGrant(
  key: { PK: string; SK: string },
  grant: ExchangeGrantRef,
): Promise<{ item?: Record<string, unknown>; alive: boolean }> {
  const keys = keysOf(grant);
  const items = await batchGet([key, keys.installation, keys.externalUser], { consistent: true });
  return { item: items.find((item) => isItemOf(item, key)), alive: isAlive(grant, items) };
}
