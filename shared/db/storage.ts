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

/** An update that moves one category counter; put it in the transaction that stores or removes the bytes. */
export function storageDelta(organizationId: string, category: StorageCategory, bytes: number) {
  return {
    TableName: getConfig().tableName,
    Key: storageKey(organizationId),
    UpdateExpression: 'ADD #category :bytes',
    ExpressionAttributeNames: { '#category': category },
    ExpressionAttributeValues: { ':bytes': bytes },
  };
}

export async function addStoredBytes(organizationId: string, category: StorageCategory, bytes: number): Promise<void> {
  await getDb().send(new UpdateCommand(storageDelta(organizationId, category, bytes)));
}

/**
 * Moves bytes from one category to another in one update (a transaction may touch the counters
 * item only once): an uploaded file that becomes a markup's original moves to `originals`.
 */
export function storageMove(organizationId: string, from: StorageCategory, to: StorageCategory, bytes: number) {
  return {
    TableName: getConfig().tableName,
    Key: storageKey(organizationId),
    UpdateExpression: 'ADD #from :out, #to :in',
    ExpressionAttributeNames: { '#from': from, '#to': to },
    ExpressionAttributeValues: { ':out': -bytes, ':in': bytes },
  };
}
