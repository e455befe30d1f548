import { GetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { storageDelta } from './storage.js';
import { transactUnlessConditionFails, tryTransact, updateIfConditionHolds, type TransactItem } from './core/transact.js';
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
  /** Mirrors the markup's explicit `retainOriginal: true`, so policy changes can count without reading markups. */
  retainOriginal?: boolean;
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

/**
 * Marks the markup as keeping its original (`retainOriginal`), and the original as kept, in one
 * transaction; false when the markup (or its original) is gone.
 */
export async function keepOriginal(markupId: string): Promise<boolean> {
  const keep = (Key: Record<string, string>): TransactItem => ({
    Update: {
      TableName: getConfig().tableName,
      Key,
      UpdateExpression: 'SET retainOriginal = :true',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':true': true },
    },
  });
  return (await tryTransact([keep(itemKey(markupId)), keep(originalKey(markupId))])).length === 0;
}

/**
 * Archives one retained original: state, index membership and the organization's `originals` byte
 * count move in one transaction, so the storage breakdown never counts an archived file. Returns
 * false when it was no longer retained (a concurrent archive won). `extra` items join the same
 * transaction (an archive job's count), so they are written exactly when the original is archived.
 */
export async function archiveOriginal(record: OriginalRecord, at = new Date().toISOString(), extra: TransactItem[] = []): Promise<boolean> {
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
  // Every archive of an organization moves its one storage counter: concurrent archives (a job's
  // batches, a conversion's NEVER_STORE) collide there and are retried rather than failed.
  const failed = await transactUnlessConditionFails([...archive, markupFlags, ...extra]);
  if (failed === undefined) return true;
  if (failed === 2) return (await transactUnlessConditionFails([...archive, ...extra])) === undefined;
  return false;
}

const notKept = {
  FilterExpression: 'attribute_not_exists(retainOriginal) OR retainOriginal = :false',
  ExpressionAttributeValues: { ':false': false },
};

function retainedOriginalsQuery(workspaceId: string, includeKept: boolean): QueryCommandInput {
  return {
    TableName: getConfig().tableName,
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk',
    ...(includeKept ? {} : notKept),
    ExpressionAttributeValues: {
      ':pk': retainedOriginalsPartition(workspaceId),
      ...(includeKept ? {} : notKept.ExpressionAttributeValues),
    },
  };
}

/**
 * How many originals of the workspace are retained (without those kept explicitly, unless `includeKept`); reads keys and counts, a page per
 * MB.
 */
export async function countRetainedOriginals(workspaceId: string, options: { includeKept: boolean }): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await getDb().send(
      new QueryCommand({ ...retainedOriginalsQuery(workspaceId, options.includeKept), Select: 'COUNT', ExclusiveStartKey: start }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

/**
 * Up to `limit` retained originals of the workspace whose markup id sorts after `after`, in markup
 * id order, and the position to go on from (absent at the end). Archived originals leave the
 * index, so a position stays valid however much was archived meanwhile.
 */
export async function retainedOriginalsAfter(
  workspaceId: string,
  options: { after?: string; limit: number; includeKept: boolean },
): Promise<{ originals: OriginalRecord[]; next?: string }> {
  const start = options.after
    ? { ...originalKey(options.after), GSI1PK: retainedOriginalsPartition(workspaceId), GSI1SK: options.after }
    : undefined;
  const page = await getDb().send(
    new QueryCommand({ ...retainedOriginalsQuery(workspaceId, options.includeKept), Limit: options.limit, ExclusiveStartKey: start }),
  );
  const next = page.LastEvaluatedKey?.GSI1SK;
  return { originals: (page.Items ?? []) as OriginalRecord[], ...(typeof next === 'string' ? { next } : {}) };
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
