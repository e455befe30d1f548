import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { updateIfConditionHolds } from './core/transact.js';
import { STORAGE_CATEGORIES } from '../schemas/workspaces.js';

export { STORAGE_CATEGORIES };
export type StorageCategory = (typeof STORAGE_CATEGORIES)[number];

export type StorageBreakdown = Record<StorageCategory | 'total', number>;

/**
 * The organization's counters item. Besides the categories it carries `reserved` (bytes of issued
 * upload policies not yet confirmed, see reservations.ts) and `claimed`, which every write moves by
 * the sum of what it moves, so `claimed = categories + reserved` holds after every write. The plan's
 * limit bounds `claimed`: a condition expression cannot add, so the sum has to be stored.
 */
export const storageKey = (organizationId: string) => ({ PK: `ORG#${organizationId}`, SK: 'STORAGE' });

export function emptyStorageItem(organizationId: string): Record<string, unknown> {
  return { ...storageKey(organizationId), entity: 'StorageUsage', organizationId, ...zeroes(), reserved: 0, claimed: 0 };
}

function zeroes(): Record<StorageCategory, number> {
  return Object.fromEntries(STORAGE_CATEGORIES.map((category) => [category, 0])) as Record<StorageCategory, number>;
}

/** The counters as stored: bytes by category, their total, what is reserved and the claimed sum. */
export interface StorageCounters extends StorageBreakdown {
  reserved: number;
  /** Stored and reserved bytes together: what the plan's limit bounds. */
  claimed: number;
}

async function readCounters(
  organizationId: string,
  consistent: boolean,
): Promise<{ counters: StorageCounters; item?: Record<string, unknown> }> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: storageKey(organizationId), ConsistentRead: consistent }),
  );
  const counts = zeroes();
  for (const category of STORAGE_CATEGORIES) counts[category] = Number(result.Item?.[category] ?? 0);
  const total = STORAGE_CATEGORIES.reduce((sum, category) => sum + counts[category], 0);
  const reserved = Number(result.Item?.reserved ?? 0);
  return { counters: { ...counts, total, reserved, claimed: Number(result.Item?.claimed ?? total + reserved) }, item: result.Item };
}

/**
 * Bytes the organization stores, by category. The counters move in the same writes that record or
 * remove stored objects, so the total is the bytes actually stored.
 */
export async function getStorageBreakdown(organizationId: string): Promise<StorageBreakdown> {
  const { counters } = await readCounters(organizationId, false);
  return Object.fromEntries(
    [...STORAGE_CATEGORIES, 'total'].map((name) => [name, counters[name as keyof StorageBreakdown]]),
  ) as StorageBreakdown;
}

/** The counters with a consistent read (quota decisions and their messages). */
export async function getStorageCounters(organizationId: string): Promise<StorageCounters> {
  return (await readCounters(organizationId, true)).counters;
}

/** Moves of the counters: categories (negative to remove) and `reserved`. */
export type CounterMoves = Partial<Record<StorageCategory | 'reserved', number>>;

/**
 * An update that moves counters by the given bytes and `claimed` by their sum; put it in the
 * transaction that stores, reserves or removes the bytes. A transaction may touch the counters item
 * only once, so one write carries every counter it changes. With `limit` (a number), the write also
 * requires that `claimed` stays within it once the moves are made: the only check that holds when
 * writes run concurrently.
 */
export function counterUpdate(organizationId: string, moves: CounterMoves, options: { limit?: number | null } = {}) {
  const given = Object.entries(moves).filter(([, bytes]) => bytes !== undefined) as [string, number][];
  if (given.length === 0) throw new Error('a counter update needs at least one counter');
  const changed = given.filter(([, bytes]) => bytes !== 0);
  const entries: [string, number][] = [
    ...(changed.length > 0 ? changed : given),
    ['claimed', given.reduce((sum, [, bytes]) => sum + bytes, 0)],
  ];
  const guarded = typeof options.limit === 'number';
  return {
    TableName: getConfig().tableName,
    Key: storageKey(organizationId),
    UpdateExpression: `ADD ${entries.map((_, i) => `#c${i} :b${i}`).join(', ')}`,
    ...(guarded ? { ConditionExpression: 'attribute_not_exists(PK) OR claimed <= :max' } : {}),
    ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#c${i}`, name])),
    ExpressionAttributeValues: {
      ...Object.fromEntries(entries.map(([, bytes], i) => [`:b${i}`, bytes])),
      ...(guarded ? { ':max': options.limit! - Math.max(0, entries.at(-1)![1]) } : {}),
    },
  };
}

/** An update that moves category counters by the given bytes (negative to remove); see `counterUpdate`. */
export function storageChange(
  organizationId: string,
  deltas: Partial<Record<StorageCategory, number>>,
  options: { limit?: number | null } = {},
) {
  return counterUpdate(organizationId, deltas, options);
}

/** An update that moves one category counter by `bytes`. */
export function storageDelta(organizationId: string, category: StorageCategory, bytes: number) {
  return storageChange(organizationId, { [category]: bytes });
}

export async function addStoredBytes(organizationId: string, category: StorageCategory, bytes: number): Promise<void> {
  await getDb().send(new UpdateCommand(storageDelta(organizationId, category, bytes)));
}

/** Moves bytes from one category to another (an uploaded file that becomes a markup's original moves to `originals`). */
export function storageMove(organizationId: string, from: StorageCategory, to: StorageCategory, bytes: number) {
  return storageChange(organizationId, { [from]: -bytes, [to]: bytes });
}

/**
 * Sets `claimed` to the sum of the other counters when it is not (counters written before it
 * existed), on the condition that nothing moved since they were read. True when it wrote.
 */
export async function repairClaimed(organizationId: string): Promise<boolean> {
  const { counters, item } = await readCounters(organizationId, true);
  const expected = counters.total + counters.reserved;
  if (!item || item.claimed === expected) return false;
  const names = [...STORAGE_CATEGORIES, 'reserved', 'claimed'];
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: storageKey(organizationId),
    UpdateExpression: 'SET #claimed = :expected',
    ConditionExpression: names
      .map((name, i) => (item[name] === undefined ? `attribute_not_exists(#n${i})` : `#n${i} = :v${i}`))
      .join(' AND '),
    ExpressionAttributeNames: { '#claimed': 'claimed', ...Object.fromEntries(names.map((name, i) => [`#n${i}`, name])) },
    ExpressionAttributeValues: {
      ':expected': expected,
      ...Object.fromEntries(names.flatMap((name, i) => (item[name] === undefined ? [] : [[`:v${i}`, item[name]]]))),
    },
  });
}
