import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { SORT_SEPARATOR, VERSION_ATTRIBUTE } from './core/table.js';
import { batchGet, type TransactItem } from './core/transact.js';
import { markupWordKeys, WORD_KEY_ATTRIBUTES } from './markup-words.js';
import type { ChargeRecord } from './usage.js';

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
  /**
   * Set, to the workspace the item left, by the transaction that moved it while what the move
   * carries along (subfolders, markups, retained originals) has yet to follow; cleared once it has.
   * No move of the item, nor into the tree below it, commits while it is set.
   */
  pendingMoveFrom?: string;
  /**
   * Added to by every UpdateItem of the record (`itemUpdate`, `markupCommentUpdate`); absent on
   * records never updated since versions came (version 0). ETags carry it (`shared/http/etag.ts`).
   */
  version?: number;
}

/** The record's version for ETags and `If-Match` (missing: 0). */
export const itemVersion = (record: ItemRecord): number => record.version ?? 0;

export interface FolderRecord extends ItemBase {
  kind: 'folder';
  role: FolderRole;
  /** Ancestor folder ids, root first; its length is the folder's depth. Rewritten when a folder moves. */
  ancestorIds: string[];
  /** Set when a deletion of the folder (or of a folder above it) began: it takes nothing in and lets nothing out (`takesItemsCheck`). */
  deletingSince?: number;
}

export type MarkupType = 'webpage' | 'image' | 'pdf' | 'video';

export interface MarkupNote {
  id: string;
  note: string;
  showNoteOnProjectOpen: boolean;
}

/** A file the service stores for a markup (as uploaded, or made by the conversion worker). */
export interface StoredFile {
  key: string;
  mimeType: string;
  filesize: number;
  filename?: string;
}

/** One page of an image markup: the spec's MarkupImage (`url`, `mimeType`, `filesize`) plus what we know. */
export interface MarkupImageRecord extends StoredFile {
  id: string;
  width?: number;
  height?: number;
}

/** A PDF markup's document, filled in by the conversion worker. */
export interface MarkupDocumentRecord {
  pageCount: number;
  pages: { number: number; width: number; height: number; image?: StoredFile }[];
}

/** A video markup's web-playable rendition, filled in by the conversion worker. */
export interface MarkupVideoRecord {
  file: StoredFile;
  durationSeconds: number;
  width: number;
  height: number;
  poster: StoredFile;
}

/** One view mode's full-page screenshot of a webpage markup: its PNG and its layout (element boxes, JSON) once ready. */
export type PageScreenshotRecord =
  | { state: 'pending' }
  | { state: 'ready'; key: string; layoutKey: string; width: number; height: number; renderedAt: number }
  | { state: 'unavailable'; error: string };

export interface MarkupRecord extends ItemBase {
  kind: 'markup';
  /** A markup is always in a folder. */
  parentFolderId: string;
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
  /**
   * Webpage markups: the full-page screenshot of each view mode (by its id), rendered by the
   * thumbnail worker after the thumbnail (shared/db/page-screenshots.ts). Absent on markups made
   * before full-page screenshots existed.
   */
  pageScreenshots?: Record<string, PageScreenshotRecord>;
  note: MarkupNote;
  retainOriginal: boolean;
  hasRetainedOriginal: boolean;
  activeThreads: number;
  createdBy: string;
  /** Image markups: pages in display order (empty until conversion made them). */
  images?: MarkupImageRecord[];
  /** PDF markups, once converted. */
  document?: MarkupDocumentRecord;
  /** Video markups, once converted. */
  video?: MarkupVideoRecord;
  /** The source's mime type when it differs from the images (a converted TIFF, PSD or EPS). */
  originalMimeType?: string;
  /** The uploaded file a converted markup is made from (PDF, video, TIFF/PSD/EPS). */
  source?: StoredFile;
  /**
   * Conversion of file markups. `failed` is final: `isReady` is then true (the worker is done) with
   * no images/document/video, and `conversionError` says why. The one way back: a conversion that
   * died of an internal error is made `pending` again by its job when an operator redrives it.
   */
  conversionStatus?: 'pending' | 'ready' | 'failed';
  conversionError?: string;
  /** What the creation of a converted markup was charged: given back if its conversion fails (DESIGN.md). */
  charge?: ChargeRecord;
  /** The installation this webpage markup was created with (POST /installations with `url`). */
  installationId?: string;
  /**
   * Pending work (a conversion, a webpage thumbnail; `hasPendingWork`): when its job was last put
   * on its queue by the sweep (absent: at creation, right after the creating transaction), and when
   * a run of the job first took it. Until taken, the markup is in the pending-work index (GSI5,
   * `pendingWorkKeys`), where the sweep finds a job lost between the commit and its enqueue.
   */
  workQueuedAt?: number;
  workStartedAt?: number;
}

export type ItemRecord = FolderRecord | MarkupRecord;

export const itemKey = (itemId: string) => ({ PK: `ITEM#${itemId}`, SK: 'ITEM' });
export const childrenPartition = (folderId: string) => `CHILDREN#${folderId}`;
export const workspaceMarkupsPartition = (workspaceId: string) => `WS#${workspaceId}#MARKUPS`;
export const subfoldersPartition = (folderId: string) => `SUBFOLDERS#${folderId}`;

/** Millisecond times as fixed-width strings, so they sort as numbers in a string sort key. */
export const sortableTime = (ms: number) => String(ms).padStart(15, '0');

/** The GSI5 partition of markups whose pending work no job run has taken yet (`pendingWorkKeys`). */
export const PENDING_WORK_PARTITION = 'PENDINGWORK';

/** A markup a worker still has to finish: its conversion, or a webpage's thumbnail. */
export const hasPendingWork = (markup: MarkupRecord): boolean =>
  markup.conversionStatus === 'pending' || (markup.type === 'webpage' && markup.thumbnailState === 'pending');

/**
 * The pending-work index keys (GSI5, which markups have free: it walks folder trees with folders
 * only): present while the markup has pending work that no job run has taken, sorted by when its
 * job was last queued. Written in the creating transaction, gone when a run takes the work or it
 * ends, so the sweep Queries only markups whose job may be lost, never Scans.
 */
export function pendingWorkKeys(markup: MarkupRecord): Record<string, string> {
  if (!hasPendingWork(markup) || markup.workStartedAt !== undefined) return {};
  return {
    GSI5PK: PENDING_WORK_PARTITION,
    GSI5SK: `${sortableTime(markup.workQueuedAt ?? markup.createdAt)}${SORT_SEPARATOR}${markup.id}`,
  };
}

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
      ...pendingWorkKeys(record),
      ...markupWordKeys(record),
    });
  }
  return keys;
}

/**
 * The markup side of a comment write: moves `activeThreads` (unresolved threads) and the markup's
 * activity time with its index key. With `open`, the write also requires that comments are not
 * paused, so pausing and commenting cannot cross.
 */
export function markupCommentUpdate(markup: MarkupRecord, options: { at: number; activeDelta?: number; open?: boolean }): TransactItem {
  const activityKey = itemIndexKeys({ ...markup, activityAt: options.at }).GSI3SK;
  const values: Record<string, unknown> = { ':at': options.at };
  const sets = ['activityAt = :at'];
  if (activityKey) {
    sets.push('GSI3SK = :activityKey');
    values[':activityKey'] = activityKey;
  }
  let expression = `SET ${sets.join(', ')} ADD #version :one`;
  values[':one'] = 1;
  if (options.activeDelta) {
    expression += ', activeThreads :delta';
    values[':delta'] = options.activeDelta;
  }
  const conditions = ['attribute_exists(PK)'];
  if (options.open) {
    conditions.push('readOnly = :false');
    values[':false'] = false;
  }
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: itemKey(markup.id),
      UpdateExpression: expression,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: { '#version': VERSION_ATTRIBUTE },
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Deletes a markup's record as it was read (condition: it exists and `modifiedAt` is unchanged), so
 * the transaction that frees its stored bytes runs once, and only for the files it was read with.
 */
export function markupDelete(markup: MarkupRecord): TransactItem {
  return {
    Delete: {
      TableName: getConfig().tableName,
      Key: itemKey(markup.id),
      ConditionExpression: 'attribute_exists(PK) AND modifiedAt = :modifiedAt',
      ExpressionAttributeValues: { ':modifiedAt': markup.modifiedAt },
    },
  };
}

export function toItem(record: ItemRecord): Record<string, unknown> {
  const searchText = record.kind === 'markup' ? `${record.name}\n${record.url ?? ''}`.toLowerCase() : undefined;
  return { ...itemKey(record.id), entity: record.kind === 'folder' ? 'Folder' : 'Markup', ...record, searchText, ...itemIndexKeys(record) };
}

const INTERNAL = new Set([
  'PK',
  'SK',
  'entity',
  'searchText',
  'GSI1PK',
  'GSI1SK',
  'GSI2PK',
  'GSI2SK',
  'GSI3PK',
  'GSI3SK',
  'GSI4PK',
  'GSI4SK',
  'GSI5PK',
  'GSI5SK',
  ...WORD_KEY_ATTRIBUTES,
]);
/** Word index keys are derived from the name, URL and workspace, which the guard already holds; markups from before the index have none. */
const UNGUARDED = new Set(WORD_KEY_ATTRIBUTES);

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
export async function getItems(itemIds: string[], consistent = false): Promise<ItemRecord[]> {
  return (await batchGet(itemIds.map(itemKey), { consistent })).map(fromItem);
}

// Writes that keep index keys in step without overwriting concurrent changes

/** An UpdateItem request (plain or inside a transaction). */
export interface ItemUpdate {
  TableName: string;
  Key: Record<string, string>;
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

const sameValue = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);
const isScalar = (value: unknown) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/**
 * What turns the stored `current` into `next`. Both go through `toItem`, so index keys are derived
 * exactly as on creation; only attributes that differ are written. Writing the difference rather
 * than the whole record keeps concurrent changes to other fields (a markup's thread count, a
 * rename) that a whole-record put would silently undo.
 */
export function itemDiff(current: ItemRecord, next: ItemRecord): { sets: [string, unknown][]; removes: string[] } {
  const before = toItem(current);
  const after = toItem(next);
  // The version is never copied from a record: only `itemUpdate`'s ADD moves it.
  const sets = Object.entries(after).filter(
    ([name, value]) => name !== VERSION_ATTRIBUTE && value !== undefined && !sameValue(before[name], value),
  );
  const removes = Object.keys(before).filter(
    (name) => name !== VERSION_ATTRIBUTE && before[name] !== undefined && after[name] === undefined,
  );
  return { sets, removes };
}

export interface ItemUpdateOptions {
  /** Extra conditions on the stored item. */
  when?: { expression: string; values: Record<string, unknown>; names: Record<string, string> };
  /**
   * Optimistic concurrency: every changed attribute must still hold the value it had in `current`,
   * so a concurrent change of the same fields fails the write (the caller re-reads and retries).
   */
  unchangedSinceRead?: boolean;
}

/**
 * An UpdateItem applying `itemDiff`. The item must still exist, so an update never brings a deleted
 * item back as a fragment. Undefined when nothing changes.
 */
export function itemUpdate(current: ItemRecord, next: ItemRecord, options: ItemUpdateOptions = {}): ItemUpdate | undefined {
  const { sets, removes } = itemDiff(current, next);
  if (sets.length === 0 && removes.length === 0) return undefined;
  const before = toItem(current);
  const names: Record<string, string> = { '#pk': 'PK', ...options.when?.names };
  const values: Record<string, unknown> = { ...options.when?.values };
  const conditions = ['attribute_exists(#pk)'];
  if (options.when) conditions.push(options.when.expression);
  const guard = (placeholder: string, attribute: string, index: string) => {
    if (!options.unchangedSinceRead || UNGUARDED.has(attribute)) return;
    const old = before[attribute];
    if (old === undefined) conditions.push(`attribute_not_exists(${placeholder})`);
    else if (isScalar(old)) {
      values[`:o${index}`] = old;
      conditions.push(`${placeholder} = :o${index}`);
    }
  };
  sets.forEach(([name, value], i) => {
    names[`#s${i}`] = name;
    values[`:s${i}`] = value;
    guard(`#s${i}`, name, `s${i}`);
  });
  removes.forEach((name, i) => {
    names[`#r${i}`] = name;
    guard(`#r${i}`, name, `r${i}`);
  });
  names['#version'] = VERSION_ATTRIBUTE;
  values[':one'] = 1;
  const clauses = [
    sets.length ? `SET ${sets.map((_, i) => `#s${i} = :s${i}`).join(', ')}` : '',
    removes.length ? `REMOVE ${removes.map((_, i) => `#r${i}`).join(', ')}` : '',
    'ADD #version :one',
  ];
  return {
    TableName: getConfig().tableName,
    Key: itemKey(current.id),
    UpdateExpression: clauses.join(' ').trim(),
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
