import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { TABLE } from './core/table.js';
import { putNew, transact, updateIfConditionHolds, type TransactItem } from './core/transact.js';

/**
 * A job that archives a workspace's retained originals in the worker (archive-all, NEVER_STORE
 * with applyToExisting). `expectedCount` is what the request answered; `archivedCount` moves in
 * the same transaction as each original it counts, so a redelivered batch never counts twice.
 * The record expires with the table's TTL a month after it was created.
 */
export interface ArchiveJobRecord {
  jobId: string;
  workspaceId: string;
  /** Also archives originals their markup keeps (`retainOriginal: true`): archive-all. */
  includeKept: boolean;
  expectedCount: number;
  archivedCount: number;
  state: 'running' | 'done';
  createdAt: string;
  finishedAt?: string;
}

const JOB_TTL_SECONDS = 30 * 24 * 3600;

export const archiveJobKey = (jobId: string) => ({ PK: `JOB#${jobId}`, SK: 'ARCHIVE' });

export function newArchiveJob(fields: Pick<ArchiveJobRecord, 'workspaceId' | 'includeKept' | 'expectedCount'>): ArchiveJobRecord {
  return { jobId: randomUUID(), ...fields, archivedCount: 0, state: 'running', createdAt: new Date().toISOString() };
}

export async function insertArchiveJob(record: ArchiveJobRecord): Promise<void> {
  const expires = Math.floor(Date.parse(record.createdAt) / 1000) + JOB_TTL_SECONDS;
  await transact([putNew({ ...archiveJobKey(record.jobId), entity: 'ArchiveJob', ...record, [TABLE.ttlAttribute]: expires })]);
}

export async function getArchiveJob(jobId: string): Promise<ArchiveJobRecord | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: archiveJobKey(jobId), ConsistentRead: true }));
  if (!result.Item) return undefined;
  const { PK: _pk, SK: _sk, entity: _entity, [TABLE.ttlAttribute]: _ttl, ...record } = result.Item;
  return record as ArchiveJobRecord;
}

/** Counts one archived original; joins the transaction that archives it. */
export function countArchived(jobId: string): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: archiveJobKey(jobId),
      UpdateExpression: 'ADD archivedCount :one',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':one': 1 },
    },
  };
}

/** Marks the job done (once; a repeated finish keeps the first time). */
export async function finishArchiveJob(jobId: string): Promise<void> {
  await updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: archiveJobKey(jobId),
    UpdateExpression: 'SET #state = :done, finishedAt = :at',
    ConditionExpression: 'attribute_exists(PK) AND #state = :running',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':done': 'done', ':running': 'running', ':at': new Date().toISOString() },
  });
}
