import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';

/** What stored bytes are counted as, per organization. */
export const STORAGE_CATEGORIES = ['pdfs', 'videos', 'images', 'attachments', 'originals'] as const;
export type StorageCategory = (typeof STORAGE_CATEGORIES)[number];

export type StorageBreakdown = Record<StorageCategory | 'total', number>;

export const storageKey = (organizationId: string) => ({ PK: `ORG#${organizationId}`, SK: 'STORAGE' });

export function emptyStorageItem(organizationId: string): Record<string, unknown> {
  return { ...storageKey(organizationId), entity: 'StorageUsage', organizationId, ...zeroes() };
}

function zeroes(): Record<StorageCategory, number> {
  return Object.fromEntries(STORAGE_CATEGORIES.map((category) => [category, 0])) as Record<StorageCategory, number>;
}

/**
 * Bytes the organization stores, by category. The counters move in the same writes that record or
 * remove stored objects, so the total is the bytes actually stored.
 */
export async function getStorageBreakdown(organizationId: string): Promise<StorageBreakdown> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: storageKey(organizationId) }));
  const counts = zeroes();
  for (const category of STORAGE_CATEGORIES) counts[category] = Number(result.Item?.[category] ?? 0);
  const total = STORAGE_CATEGORIES.reduce((sum, category) => sum + counts[category], 0);
  return { ...counts, total };
}

/**
 * An update that moves category counters by the given bytes (negative to remove); put it in the
 * transaction that stores or removes the bytes. A transaction may touch the counters item only
 * once, so one write carries every category it changes.
 */
export function storageChange(organizationId: string, deltas: Partial<Record<StorageCategory, number>>) {
  const given = Object.entries(deltas).filter(([, bytes]) => bytes !== undefined);
  const changed = given.filter(([, bytes]) => bytes !== 0);
  const entries = changed.length > 0 ? changed : given;
  if (entries.length === 0) throw new Error('storageChange needs at least one category');
  return {
    TableName: getConfig().tableName,
    Key: storageKey(organizationId),
    UpdateExpression: `ADD ${entries.map((_, i) => `#c${i} :b${i}`).join(', ')}`,
    ExpressionAttributeNames: Object.fromEntries(entries.map(([category], i) => [`#c${i}`, category])),
    ExpressionAttributeValues: Object.fromEntries(entries.map(([, bytes], i) => [`:b${i}`, bytes])),
  };
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
