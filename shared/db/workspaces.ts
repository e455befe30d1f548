import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { newFolderRecord, toItem } from './items.js';
import { queryPage, type Page } from './core/paging.js';
import { batchGet, putNew, tryTransact, type TransactItem } from './core/transact.js';
import { SORT_SEPARATOR, versionCondition } from './core/table.js';
import { ORIGINAL_FILE_STORAGE_POLICIES } from '../schemas/workspaces.js';

export { ORIGINAL_FILE_STORAGE_POLICIES };
export type OriginalFileStoragePolicy = (typeof ORIGINAL_FILE_STORAGE_POLICIES)[number];

export interface WorkspaceRecord {
  id: string;
  organizationId: string;
  name: string;
  slug: string;
  rootFolderId: string;
  archiveFolderId: string;
  originalFileStoragePolicy: OriginalFileStoragePolicy;
  createdAt: string;
  modifiedAt: string;
  lastActivityAt: string;
  deletedAt?: string;
  /** Moves by 1 with every write of the workspace's fields (`version` in `table.ts`); 0 when never written since versions came. */
  version: number;
  /**
   * Folders moved out of this workspace whose move the worker has not finished carrying: folder id
   * -> destination workspace id (`moves.ts`). Read only: written by the move's own transaction and
   * the worker, never by `toWorkspaceItem`.
   */
  movesOut?: ReadonlyMap<string, string>;
}

/** The public Workspace shape of the spec. */
export interface Workspace {
  id: string;
  name: string;
  rootFolderId: string;
  archiveFolderId: string;
  slug: string;
}

export const workspaceKey = (workspaceId: string) => ({ PK: `WS#${workspaceId}`, SK: 'WS' });
/** Reserves a slug inside an organization. */
export const workspaceSlugKey = (organizationId: string, slug: string) => ({ PK: `WSSLUG#${organizationId}#${slug}`, SK: 'WSSLUG' });
/** GSI1 lists an organization's workspaces by name, GSI2 by last activity. */
export const workspaceListPartition = (organizationId: string) => `ORG#${organizationId}#WORKSPACES`;

function listKeys(record: WorkspaceRecord) {
  return {
    GSI1PK: workspaceListPartition(record.organizationId),
    GSI1SK: `${record.name.toLowerCase()}${SORT_SEPARATOR}${record.id}`,
    GSI2PK: workspaceListPartition(record.organizationId),
    GSI2SK: `${record.lastActivityAt}${SORT_SEPARATOR}${record.id}`,
  };
}

export function toWorkspaceItem(record: WorkspaceRecord): Record<string, unknown> {
  const { movesOut: _pending, ...fields } = record;
  return { ...workspaceKey(record.id), entity: 'Workspace', ...fields, ...listKeys(record) };
}

/** One entry of a workspace's `movesOut` string set. */
export const movesOutEntry = (folderId: string, toWorkspaceId: string) => `${folderId}=${toWorkspaceId}`;

/** A workspace's `movesOut` string set as moved folder id -> destination workspace id. */
export function parseMovesOut(value: unknown): Map<string, string> {
  const entries: unknown[] = value instanceof Set ? [...(value as Set<unknown>)] : [];
  return new Map(
    entries.flatMap((entry) => {
      const [folderId, toWorkspaceId] = typeof entry === 'string' ? entry.split('=') : [];
      return folderId && toWorkspaceId ? [[folderId, toWorkspaceId] as const] : [];
    }),
  );
}

export function fromWorkspaceItem(item: Record<string, unknown>): WorkspaceRecord {
  return {
    id: item.id as string,
    organizationId: item.organizationId as string,
    name: item.name as string,
    slug: item.slug as string,
    rootFolderId: item.rootFolderId as string,
    archiveFolderId: item.archiveFolderId as string,
    originalFileStoragePolicy: (item.originalFileStoragePolicy as OriginalFileStoragePolicy | undefined) ?? 'STORE_ALWAYS',
    createdAt: item.createdAt as string,
    modifiedAt: item.modifiedAt as string,
    lastActivityAt: (item.lastActivityAt as string | undefined) ?? (item.createdAt as string),
    deletedAt: item.deletedAt as string | undefined,
    version: (item.version as number | undefined) ?? 0,
    ...(item.movesOut ? { movesOut: parseMovesOut(item.movesOut) } : {}),
  };
}

export function toPublicWorkspace(record: WorkspaceRecord): Workspace {
  return {
    id: record.id,
    name: record.name,
    rootFolderId: record.rootFolderId,
    archiveFolderId: record.archiveFolderId,
    slug: record.slug,
  };
}

/** A new workspace record with fresh ids for it and its root and archive folders. */
export function newWorkspaceRecord(organizationId: string, name: string, slug: string, now = new Date()): WorkspaceRecord {
  const iso = now.toISOString();
  return {
    id: randomUUID(),
    organizationId,
    name,
    slug,
    rootFolderId: randomUUID(),
    archiveFolderId: randomUUID(),
    originalFileStoragePolicy: 'STORE_ALWAYS',
    createdAt: iso,
    modifiedAt: iso,
    lastActivityAt: iso,
    version: 0,
  };
}

const slugReservation = (record: WorkspaceRecord) =>
  putNew({ ...workspaceSlugKey(record.organizationId, record.slug), entity: 'WorkspaceSlug', workspaceId: record.id });
const slugRelease = (record: WorkspaceRecord): TransactItem => ({
  Delete: { TableName: getConfig().tableName, Key: workspaceSlugKey(record.organizationId, record.slug) },
});

/** Transaction items creating a workspace, its slug reservation and its root and archive folders. */
function createWorkspaceItems(record: WorkspaceRecord): TransactItem[] {
  const at = Date.parse(record.createdAt);
  const folder = (id: string, name: string, role: 'root' | 'archive') =>
    toItem(newFolderRecord({ id, workspaceId: record.id, organizationId: record.organizationId, name, parent: null, role, at }));
  return [
    putNew(toWorkspaceItem(record)),
    slugReservation(record),
    putNew(folder(record.rootFolderId, 'Root', 'root')),
    putNew(folder(record.archiveFolderId, 'Archive', 'archive')),
  ];
}

/**
 * Creates a workspace with its slug reservation and its root and archive folders, and `extraItems`
 * (the records of a new organization), in one transaction. False when the slug is taken.
 */
export async function insertWorkspace(record: WorkspaceRecord, extraItems: TransactItem[]): Promise<boolean> {
  const [failed] = await tryTransact([...createWorkspaceItems(record), ...extraItems]);
  if (failed === 1) return false;
  if (failed !== undefined)
    throw new Error(`Workspace ${record.id} could not be created: item ${failed} of its transaction failed its condition.`);
  return true;
}

/**
 * The workspace, or undefined when it does not exist or was deleted. `consistent` for authorizing
 * an item: its `movesOut` must show a move from the moment the move's response was sent.
 */
export async function getWorkspace(workspaceId: string, consistent = false): Promise<WorkspaceRecord | undefined> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: workspaceKey(workspaceId), ConsistentRead: consistent }),
  );
  if (!result.Item) return undefined;
  const record = fromWorkspaceItem(result.Item);
  return record.deletedAt ? undefined : record;
}

/** The workspaces of `workspaceIds` that exist and are not deleted, in no particular order (one BatchGet). */
export async function getWorkspaces(workspaceIds: readonly string[]): Promise<WorkspaceRecord[]> {
  const items = await batchGet(workspaceIds.map(workspaceKey));
  return items.map(fromWorkspaceItem).filter((record) => !record.deletedAt);
}

export type WorkspaceSort = 'name' | 'lastActivity';

export function listWorkspaces(
  organizationId: string,
  options: { sortBy: WorkspaceSort; dir: 'asc' | 'desc'; limit: number; before?: string; since?: string },
): Promise<Page<WorkspaceRecord>> {
  return queryPage(
    {
      list: `workspaces:${options.sortBy}:${options.dir}`,
      index: options.sortBy === 'name' ? 'GSI1' : 'GSI2',
      partitionValue: workspaceListPartition(organizationId),
      ascending: options.dir === 'asc',
      limit: options.limit,
      before: options.before,
      since: options.since,
    },
    fromWorkspaceItem,
  );
}

/**
 * Writes the changed workspace `next` over `current`, moving its slug reservation when the slug
 * changed, in one transaction: 'gone' when the workspace was deleted meanwhile, 'slug-taken' when
 * another workspace of the organization holds the new slug. With `expectedVersion` (an `If-Match`),
 * 'gone' also when the workspace is no longer at that version.
 */
export async function writeWorkspaceChange(
  current: WorkspaceRecord,
  next: WorkspaceRecord,
  options: { expectedVersion?: number } = {},
): Promise<'updated' | 'gone' | 'slug-taken'> {
  const items = [updateWorkspaceItem(next, options.expectedVersion)];
  if (next.slug !== current.slug) items.push(slugReservation(next), slugRelease(current));
  const [failed] = await tryTransact(items);
  if (failed === 1) return 'slug-taken';
  if (failed === 0) return 'gone';
  if (failed !== undefined)
    throw new Error(`Workspace ${current.id} could not be updated: item ${failed} of its transaction failed its condition.`);
  return 'updated';
}

/** Writes a live workspace's fields; false when it was deleted meanwhile. */
export async function saveWorkspace(record: WorkspaceRecord): Promise<boolean> {
  return (await tryTransact([updateWorkspaceItem(record)])).length === 0;
}

/**
 * Sets fields of a live workspace, keeps its list keys in step and adds 1 to its version (an
 * UpdateItem, so two writers never leave one version with two contents); fails if it was deleted
 * meanwhile or, with `expectedVersion`, is no longer at that version.
 */
function updateWorkspaceItem(record: WorkspaceRecord, expectedVersion?: number): TransactItem {
  const { PK: _pk, SK: _sk, version: _version, ...fields } = toWorkspaceItem(record);
  const names: Record<string, string> = { '#version': 'version' };
  const values: Record<string, unknown> = { ':one': 1 };
  const sets = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([name, value], i) => {
      names[`#f${i}`] = name;
      values[`:f${i}`] = value;
      return `#f${i} = :f${i}`;
    });
  const guard = expectedVersion === undefined ? undefined : versionCondition(expectedVersion);
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: workspaceKey(record.id),
      UpdateExpression: `SET ${sets.join(', ')} ADD #version :one`,
      ConditionExpression: `attribute_exists(PK) AND attribute_not_exists(deletedAt)${guard ? ` AND ${guard.expression}` : ''}`,
      ExpressionAttributeNames: { ...names, ...guard?.names },
      ExpressionAttributeValues: { ...values, ...guard?.values },
    },
  };
}

/**
 * Marks the workspace deleted and takes it out of the organization's lists, releasing its slug, in
 * one transaction; false when it was already gone (or, with `expectedVersion`, no longer at that version).
 */
export async function markWorkspaceDeleted(
  record: WorkspaceRecord,
  now: string,
  options: { expectedVersion?: number } = {},
): Promise<boolean> {
  const guard = options.expectedVersion === undefined ? undefined : versionCondition(options.expectedVersion);
  const items: TransactItem[] = [
    {
      Update: {
        TableName: getConfig().tableName,
        Key: workspaceKey(record.id),
        UpdateExpression: 'SET deletedAt = :now, modifiedAt = :now REMOVE GSI1PK, GSI1SK, GSI2PK, GSI2SK',
        ConditionExpression: `attribute_exists(PK) AND attribute_not_exists(deletedAt)${guard ? ` AND ${guard.expression}` : ''}`,
        ...(guard ? { ExpressionAttributeNames: guard.names } : {}),
        ExpressionAttributeValues: { ':now': now, ...guard?.values },
      },
    },
    slugRelease(record),
  ];
  return (await tryTransact(items)).length === 0;
}

/** Records activity in the workspace, which orders the `lastActivity` list. */
export async function touchWorkspaceActivity(workspaceId: string, at = new Date().toISOString()): Promise<void> {
  await getDb().send(
    new UpdateCommand({
      TableName: getConfig().tableName,
      Key: workspaceKey(workspaceId),
      UpdateExpression: 'SET lastActivityAt = :at, GSI2SK = :sk',
      ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(deletedAt)',
      ExpressionAttributeValues: { ':at': at, ':sk': `${at}${SORT_SEPARATOR}${workspaceId}` },
    }),
  );
}
