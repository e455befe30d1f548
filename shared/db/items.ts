import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { SORT_SEPARATOR } from './table.js';

/**
 * Folder items: folders and markups share one record shape and one key (`ITEM#<id>`), because an
 * item id is a markup id (DESIGN.md). Times are millisecond numbers here; the markup resource shows
 * them as ISO strings.
 */
export type FolderRole = 'root' | 'archive' | 'folder';

/** Folders may nest this deep below the workspace root (the root is depth 0). */
export const MAX_FOLDER_DEPTH = 10;

interface ItemBase {
  id: string;
  workspaceId: string;
  organizationId: string;
  /** null only for a workspace's root and archive folders. */
  parentFolderId: string | null;
  name: string;
  createdAt: number;
  modifiedAt: number;
  /** Last change to the item or, for a folder, to what was put in it; orders the `activity` listing. */
  activityAt: number;
  /** Where an archived item came from: the folder names from the root down (for restore withPath). */
  archivedFromPath?: string[];
}

export interface FolderRecord extends ItemBase {
  kind: 'folder';
  role: FolderRole;
  /** Ancestor folder ids, root first; its length is the folder's depth. Rewritten when a folder moves. */
  ancestorIds: string[];
}

export type MarkupType = 'webpage' | 'image' | 'pdf' | 'video';

export interface MarkupNote {
  id: string;
  note: string;
  showNoteOnProjectOpen: boolean;
}

export interface MarkupRecord extends ItemBase {
  kind: 'markup';
  type: MarkupType;
  url?: string;
  readOnly: boolean;
  status: 'editing';
  isReady: boolean;
  /** Object key of the rendered thumbnail, once there is one. */
  thumbnailKey?: string;
  thumbnailState: 'pending' | 'ready' | 'unavailable';
  /** Why no thumbnail could be made (shown with the placeholder). */
  thumbnailError?: string;
  note: MarkupNote;
  retainOriginal: boolean;
  hasRetainedOriginal: boolean;
  activeThreads: number;
  createdBy: string;
}

export type ItemRecord = FolderRecord | MarkupRecord;

export const itemKey = (itemId: string) => ({ PK: `ITEM#${itemId}`, SK: 'ITEM' });
export const childrenPartition = (folderId: string) => `CHILDREN#${folderId}`;
export const workspaceMarkupsPartition = (workspaceId: string) => `WS#${workspaceId}#MARKUPS`;
export const subfoldersPartition = (folderId: string) => `SUBFOLDERS#${folderId}`;

/** Millisecond times as fixed-width strings, so they sort as numbers in a string sort key. */
export const sortableTime = (ms: number) => String(ms).padStart(15, '0');

/** The index keys an item carries, all derived from its fields: recompute them on every write. */
export function itemIndexKeys(record: ItemRecord): Record<string, string> {
  const keys: Record<string, string> = {};
  if (record.parentFolderId) {
    const children = childrenPartition(record.parentFolderId);
    Object.assign(keys, {
      GSI1PK: children,
      GSI1SK: `${record.name.toLowerCase()}${SORT_SEPARATOR}${record.id}`,
      GSI2PK: children,
      GSI2SK: `${sortableTime(record.createdAt)}${SORT_SEPARATOR}${record.id}`,
      GSI3PK: children,
      GSI3SK: `${sortableTime(record.activityAt)}${SORT_SEPARATOR}${record.id}`,
    });
    if (record.kind === 'folder') Object.assign(keys, { GSI5PK: subfoldersPartition(record.parentFolderId), GSI5SK: record.id });
  }
  if (record.kind === 'markup') {
    Object.assign(keys, {
      GSI4PK: workspaceMarkupsPartition(record.workspaceId),
      GSI4SK: `${new Date(record.createdAt).toISOString()}${SORT_SEPARATOR}${record.id}`,
    });
  }
  return keys;
}

export function toItem(record: ItemRecord): Record<string, unknown> {
  const searchText = record.kind === 'markup' ? `${record.name}\n${record.url ?? ''}`.toLowerCase() : undefined;
  return { ...itemKey(record.id), entity: record.kind === 'folder' ? 'Folder' : 'Markup', ...record, searchText, ...itemIndexKeys(record) };
}

const INTERNAL = new Set(['PK', 'SK', 'entity', 'searchText', 'GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK', 'GSI3PK', 'GSI3SK', 'GSI4PK', 'GSI4SK', 'GSI5PK', 'GSI5SK']);

export function fromItem(item: Record<string, unknown>): ItemRecord {
  return Object.fromEntries(Object.entries(item).filter(([name]) => !INTERNAL.has(name))) as unknown as ItemRecord;
}

/** A new folder record under `parent` (or a workspace's root/archive folder when parent is null). */
export function newFolderRecord(fields: {
  id: string;
  workspaceId: string;
  organizationId: string;
  name: string;
  parent: FolderRecord | null;
  role?: FolderRole;
  at?: number;
}): FolderRecord {
  const at = fields.at ?? Date.now();
  return {
    kind: 'folder',
    id: fields.id,
    workspaceId: fields.workspaceId,
    organizationId: fields.organizationId,
    parentFolderId: fields.parent?.id ?? null,
    name: fields.name,
    role: fields.role ?? 'folder',
    ancestorIds: fields.parent ? [...fields.parent.ancestorIds, fields.parent.id] : [],
    createdAt: at,
    modifiedAt: at,
    activityAt: at,
  };
}

export async function getItem(itemId: string, consistent = false): Promise<ItemRecord | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: itemKey(itemId), ConsistentRead: consistent }));
  return result.Item ? fromItem(result.Item) : undefined;
}

/** Items by id (at most 100 per call to DynamoDB; any number here), in no particular order. */
export async function getItems(itemIds: string[]): Promise<ItemRecord[]> {
  const unique = [...new Set(itemIds)];
  const found: ItemRecord[] = [];
  for (let i = 0; i < unique.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = unique.slice(i, i + 100).map(itemKey);
    while (keys && keys.length > 0) {
      const tableName = getConfig().tableName;
      const result = await getDb().send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys } } }));
      found.push(...(result.Responses?.[tableName] ?? []).map(fromItem));
      keys = result.UnprocessedKeys?.[tableName]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return found;
}
