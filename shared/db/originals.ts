import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { storageDelta } from './storage.js';
import { tryTransact, updateIfConditionHolds, type TransactItem } from './transact.js';
import { itemKey } from './items.js';

/**
 * The original file a converted markup was made from. While retained it sits in its workspace's
 * GSI1 partition of retained originals, so policy changes find them without a scan.
 */
export interface OriginalRecord {
  markupId: string;
  workspaceId: string;
  organizationId: string;
  key: string;
  filename: string;
  mimeType: string;
  filesize: number;
  state: 'retained' | 'archived';
  archivedAt?: string;
}

export const originalKey = (markupId: string) => ({ PK: `ORIGINAL#${markupId}`, SK: 'ORIGINAL' });
export const retainedOriginalsPartition = (workspaceId: string) => `WS#${workspaceId}#ORIGINALS#RETAINED`;

export function toOriginalItem(record: OriginalRecord): Record<string, unknown> {
  const retained = record.state === 'retained' ? { GSI1PK: retainedOriginalsPartition(record.workspaceId), GSI1SK: record.markupId } : {};
  return { ...originalKey(record.markupId), entity: 'Original', ...record, ...retained };
}

export async function getOriginal(markupId: string): Promise<OriginalRecord | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: originalKey(markupId), ConsistentRead: true }));
  return result.Item as OriginalRecord | undefined;
}

/** Marks the markup as keeping its original (`retainOriginal`); false when the markup is gone. */
export async function keepOriginal(markupId: string): Promise<boolean> {
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: itemKey(markupId),
    UpdateExpression: 'SET retainOriginal = :true',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeValues: { ':true': true },
  });
}

/**
 * Archives one retained original: state, index membership and the organization's `originals` byte
 * count move in one transaction, so the storage breakdown never counts an archived file. Returns
 * false when it was no longer retained (a concurrent archive won).
 */
export async function archiveOriginal(record: OriginalRecord, at = new Date().toISOString()): Promise<boolean> {
  const archive: TransactItem[] = [
    {
      Update: {
        TableName: getConfig().tableName,
        Key: originalKey(record.markupId),
        UpdateExpression: 'SET #state = :archived, archivedAt = :at REMOVE GSI1PK, GSI1SK',
        ConditionExpression: '#state = :retained',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':archived': 'archived', ':retained': 'retained', ':at': at },
      },
    },
    { Update: storageDelta(record.organizationId, 'originals', -record.filesize) },
  ];
  // The markup says whether it still has its original; it flips in the same transaction. A markup
  // being deleted may already be gone, and then only the original moves.
  const markupFlags: TransactItem = {
    Update: {
      TableName: getConfig().tableName,
      Key: itemKey(record.markupId),
      UpdateExpression: 'SET hasRetainedOriginal = :false, retainOriginal = :false',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':false': false },
    },
  };
  const [failed] = await tryTransact([...archive, markupFlags]);
  if (failed === undefined) return true;
  if (failed === 2) return (await tryTransact(archive)).length === 0;
  return false;
}

/**
 * A retained original belongs to its markup's workspace (that workspace's archive-all and policy
 * changes find it through its index key), so it follows a markup that changes workspace.
 */
export async function moveOriginalToWorkspace(markupId: string, workspaceId: string): Promise<void> {
  const tableName = getConfig().tableName;
  const record = await getOriginal(markupId);
  if (!record) return;
  const moved = toOriginalItem({ ...record, workspaceId });
  const written = await updateIfConditionHolds({
    TableName: tableName,
    Key: originalKey(markupId),
    UpdateExpression: moved.GSI1PK ? 'SET workspaceId = :ws, GSI1PK = :gsi' : 'SET workspaceId = :ws',
    ConditionExpression: '#state = :state',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':ws': workspaceId, ':state': record.state, ...(moved.GSI1PK ? { ':gsi': moved.GSI1PK } : {}) },
  });
  // Archived meanwhile: it left the retained index, so only its workspace is left to change.
  if (!written) await moveOriginalToWorkspace(markupId, workspaceId);
}
