import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { forEachLimit } from '../concurrency.js';
import {
  MAX_FOLDER_DEPTH,
  childrenPartition,
  fromItem,
  getItem,
  getItems,
  newFolderRecord,
  subfoldersPartition,
  type FolderRecord,
  type ItemRecord,
  type MarkupRecord,
} from '../db/items.js';
import { applyItemChange, applyItemChanges, insertFolderRecord, moveItemRecord } from '../db/item-writes.js';
import { moveOriginalToWorkspace } from '../db/originals.js';
import { queryAll, queryPage, type Page } from '../db/paging.js';
import { getPlan } from '../db/plans.js';
import type { IndexName } from '../db/table.js';
import type { Role } from '../db/users.js';
import { getWorkspace, type WorkspaceRecord } from '../db/workspaces.js';
import { BadRequestError, ConflictError, ForbiddenError, HttpError, NotFoundError, UnprocessableError } from '../http/errors.js';
import { deleteItemRecords } from './deletion.js';
import { INCLUDE_ALL, toPublicMarkup, type MarkupViewContext } from './markup-view.js';
import { atLeast, roleOf } from './roles.js';

/** Names are at most this long (the `Name` schema); suffixed names are cut to fit. */
const NAME_MAX_LENGTH = 200;
/** Parallel reads (one Query per folder) one tree operation keeps in flight. */
const TREE_CONCURRENCY = 16;
/** Items per read when `page` skips ahead (one Query each). */
const SKIP_CHUNK = 100;

// ---------------------------------------------------------------------------------------------
// Names

const lower = (name: string) => name.toLowerCase();
const NUMBERED = /^(.+?) \((\d+)\)$/;

/**
 * The first of `desired`, `desired (2)`, `desired (3)`, … not in `taken` (lower-cased names).
 * A name that already ends in ` (n)` is numbered from its base, so `Plans (2)` becomes `Plans (3)`
 * rather than `Plans (2) (2)`. The base is cut so the suffixed name stays within the name limit.
 */
export function freeName(desired: string, taken: ReadonlySet<string>): string {
  if (!taken.has(lower(desired))) return desired;
  const base = NUMBERED.exec(desired)?.[1] ?? desired;
  for (let n = 2; ; n += 1) {
    const suffix = ` (${n})`;
    const candidate = `${base.slice(0, NAME_MAX_LENGTH - suffix.length).trimEnd()}${suffix}`;
    if (!taken.has(lower(candidate))) return candidate;
  }
}

/**
 * Move rule 4 (and folder creation): the folder keeps `name` when no sibling folder has it
 * (case-insensitively); otherwise it takes `fallbackName` when given, else a numbered name. A
 * fallback that clashes too is numbered in turn.
 */
export function chooseFolderName(name: string, fallbackName: string | undefined, taken: ReadonlySet<string>): string {
  if (!taken.has(lower(name))) return name;
  return freeName(fallbackName ?? name, taken);
}

// ---------------------------------------------------------------------------------------------
// The public shapes

export type ItemType = 'folder' | 'markup';

/** The folder-item shape of the spec ("A moved item is returned as"), plus `type`. */
export interface FolderItem {
  id: string;
  type: ItemType;
  createdAt: number;
  modifiedAt: number;
  deletedAt: null;
  scopes: string[];
  assignedRoleSlugs: string[];
  name: string;
  parentFolderId: string | null;
  workspaceId: string;
}

/** What the caller's role lets it do to items: view always, edit from contributor, delete from admin. */
export function folderItemScopes(role: Role): string[] {
  const scopes = ['folderItem:view'];
  if (atLeast(role, 'contributor')) scopes.push('folderItem:edit');
  if (atLeast(role, 'admin')) scopes.push('folderItem:delete');
  return scopes;
}

/**
 * The one view of a folder or markup as a folder item. Listings show folders and markups side by
 * side, so `type` is always present; times are millisecond numbers (spec Conventions 4). Items carry
 * no per-item role assignments, so `assignedRoleSlugs` is empty.
 */
export function toFolderItem(record: ItemRecord, role: Role): FolderItem {
  return {
    id: record.id,
    type: record.kind,
    createdAt: record.createdAt,
    modifiedAt: record.modifiedAt,
    deletedAt: null,
    scopes: folderItemScopes(role),
    assignedRoleSlugs: [],
    name: record.name,
    parentFolderId: record.parentFolderId,
    workspaceId: record.workspaceId,
  };
}

// ---------------------------------------------------------------------------------------------
// Scope and roles

/** An item the caller may reach, with its (live) workspace and the caller's role there. */
export interface ItemAccess<T extends ItemRecord = ItemRecord> {
  item: T;
  workspace: WorkspaceRecord;
  role: Role;
}

/** 403 unless the item lies in the key's workspace (workspace keys) or organization (organization keys). */
function requireInScope(principal: Principal, item: ItemRecord): void {
  if (principal.scope === 'workspace' && item.workspaceId !== principal.workspaceId) {
    throw new ForbiddenError(
      `This API key is scoped to workspace ${principal.workspaceId} and cannot act on item ${item.id} of another workspace.`,
      'workspace-out-of-scope',
    );
  }
  if (item.organizationId !== principal.organizationId) {
    throw new ForbiddenError(`Item ${item.id} is not in this API key's organization.`, 'workspace-out-of-scope');
  }
}

async function accessTo<T extends ItemRecord>(principal: Principal, item: T): Promise<ItemAccess<T>> {
  requireInScope(principal, item);
  const [workspace, role] = await Promise.all([getWorkspace(item.workspaceId), roleOf(principal, item.workspaceId)]);
  if (!workspace) throw new NotFoundError(`Item ${item.id} does not exist.`);
  return { item, workspace, role };
}

/**
 * The item a request names: 404 when unknown (or its workspace is deleted), 403 when outside the
 * key's scope. Writes read consistently so they decide on the latest state.
 */
export async function loadItemForCaller(principal: Principal, itemId: string, options: { consistent?: boolean } = {}): Promise<ItemAccess> {
  const item = await getItem(itemId, options.consistent ?? false);
  if (!item) throw new NotFoundError(`Item ${itemId} does not exist.`);
  return accessTo(principal, item);
}

/** Like `loadItemForCaller`, for ids that must name a folder (a markup id is a 404 here). */
export async function loadFolderForCaller(
  principal: Principal,
  folderId: string,
  options: { consistent?: boolean } = {},
): Promise<ItemAccess<FolderRecord>> {
  const item = await getItem(folderId, options.consistent ?? false);
  if (!item || item.kind !== 'folder') throw new NotFoundError(`Folder ${folderId} does not exist.`);
  return accessTo(principal, item);
}

/** 403 unless the caller's role reaches `minimum` (contributors edit items, admins delete them). */
export function requireItemRole(access: Pick<ItemAccess, 'role'>, minimum: Role, action: string): void {
  if (!atLeast(access.role, minimum)) {
    throw new ForbiddenError(`Your role in this workspace (${access.role}) does not allow you to ${action}; it needs ${minimum} or above.`, 'insufficient-role');
  }
}

/**
 * Every listed item, all or nothing: unknown ids make the whole request a 404 naming them, an item
 * outside the key's scope a 403, and a role below `minimum` in any workspace a 403.
 */
export async function loadItemsForCaller(principal: Principal, itemIds: readonly string[], minimum: Role, action: string): Promise<ItemAccess[]> {
  const ids = [...new Set(itemIds)];
  const found = new Map((await getItems(ids)).map((item) => [item.id, item]));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) throw new NotFoundError(`These items do not exist: ${missing.join(', ')}. Nothing was changed.`);
  const items = ids.map((id) => found.get(id)!);
  for (const item of items) requireInScope(principal, item);
  const workspaceIds = [...new Set(items.map((item) => item.workspaceId))];
  const contexts = new Map(
    await Promise.all(
      workspaceIds.map(async (id) => [id, { workspace: await getWorkspace(id), role: await roleOf(principal, id) }] as const),
    ),
  );
  return items.map((item) => {
    const context = contexts.get(item.workspaceId)!;
    if (!context.workspace) throw new NotFoundError(`Item ${item.id} does not exist. Nothing was changed.`);
    requireItemRole(context, minimum, action);
    return { item, workspace: context.workspace, role: context.role };
  });
}

// ---------------------------------------------------------------------------------------------
// Trees

/** The direct subfolders of a folder (GSI5: folders only, so markups are never read). */
async function subfolders(folderId: string): Promise<FolderRecord[]> {
  const found: FolderRecord[] = [];
  for await (const item of queryAll('GSI5', subfoldersPartition(folderId))) found.push(fromItem(item) as FolderRecord);
  return found;
}

/**
 * Every folder below `folder` (not itself), one GSI5 level at a time with the level's queries in
 * parallel; a tree is at most MAX_FOLDER_DEPTH levels, so this is a handful of rounds.
 */
export async function descendantFolders(folder: FolderRecord): Promise<FolderRecord[]> {
  const seen = new Set([folder.id]);
  const found: FolderRecord[] = [];
  let level: FolderRecord[] = [folder];
  while (level.length > 0) {
    const next: FolderRecord[] = [];
    await forEachLimit(level, TREE_CONCURRENCY, async (parent) => {
      for (const child of await subfolders(parent.id)) {
        if (seen.has(child.id)) continue;
        seen.add(child.id);
        next.push(child);
      }
    });
    found.push(...next);
    level = next;
  }
  return found;
}

/** The markups directly inside any of `folders`, read from the children index in parallel. */
async function markupsIn(folders: readonly FolderRecord[]): Promise<MarkupRecord[]> {
  const found: MarkupRecord[] = [];
  await forEachLimit(folders, TREE_CONCURRENCY, async (folder) => {
    for await (const item of queryAll('GSI1', childrenPartition(folder.id))) {
      const record = fromItem(item);
      if (record.kind === 'markup') found.push(record);
    }
  });
  return found;
}

/** How many folder levels lie below `folder` (0 when it has no subfolders). */
export function subtreeHeight(folder: FolderRecord, descendants: readonly FolderRecord[]): number {
  return descendants.reduce((height, d) => Math.max(height, d.ancestorIds.length - folder.ancestorIds.length), 0);
}

/**
 * A descendant's ancestor ids after the folder above it moved from `moved` to `movedTo`: the part
 * from the root down to the moved folder is replaced, the part below it is kept.
 */
export function rebaseAncestorIds(descendant: FolderRecord, moved: FolderRecord, movedTo: FolderRecord): string[] {
  return [...movedTo.ancestorIds, movedTo.id, ...descendant.ancestorIds.slice(moved.ancestorIds.length + 1)];
}

/** Folder names already used under each folder, loaded once per request and kept current as names are claimed. */
class SiblingNames {
  private readonly byFolder = new Map<string, Promise<Set<string>>>();

  of(folderId: string): Promise<Set<string>> {
    let names = this.byFolder.get(folderId);
    if (!names) {
      names = subfolders(folderId).then((folders) => new Set(folders.map((f) => lower(f.name))));
      this.byFolder.set(folderId, names);
    }
    return names;
  }

  async claim(folderId: string, name: string): Promise<void> {
    (await this.of(folderId)).add(lower(name));
  }
}

// ---------------------------------------------------------------------------------------------
// Read

/**
 * GET /items/:id. A markup answers with the public Markup shape; a folder with its folder-item
 * fields and `ancestors` (root first), read with one BatchGet.
 */
export async function describeItem(access: ItemAccess, links: Pick<MarkupViewContext, 'origin' | 'appUrl'>): Promise<Record<string, unknown>> {
  const { item, role } = access;
  if (item.kind === 'markup') return toPublicMarkup(item, { role, plan: await getPlan(item.organizationId), ...links, include: INCLUDE_ALL });
  const byId = new Map((await getItems(item.ancestorIds)).map((ancestor) => [ancestor.id, ancestor]));
  const ancestors = item.ancestorIds.flatMap((id) => {
    const ancestor = byId.get(id);
    return ancestor ? [toFolderItem(ancestor, role)] : [];
  });
  return { ...toFolderItem(item, role), ancestors };
}

export const CHILD_ORDERS = ['az', 'za', 'activity', 'created'] as const;
export type ChildOrder = (typeof CHILD_ORDERS)[number];

/** Each order is one children index read forwards or backwards; activity and created list the most recent first. */
const ORDERS: Record<ChildOrder, { index: IndexName; ascending: boolean }> = {
  az: { index: 'GSI1', ascending: true },
  za: { index: 'GSI1', ascending: false },
  activity: { index: 'GSI3', ascending: false },
  created: { index: 'GSI2', ascending: false },
};

export interface ChildListOptions {
  order: ChildOrder;
  limit: number;
  /** 1-based; page N skips (N-1)·limit children by following cursors. */
  page: number;
  before?: string;
  since?: string;
}

/**
 * One page of a folder's children (folders and markups together). `page` is reached by walking
 * cursors from the start in reads of up to 100, so the page it answers carries a `prevCursor` and
 * a `nextCursor` like any other; a page past the end is empty.
 */
export async function listChildItems(access: ItemAccess<FolderRecord>, options: ChildListOptions): Promise<Page<FolderItem>> {
  if (options.page > 1 && (options.before !== undefined || options.since !== undefined)) {
    throw new BadRequestError('page cannot be combined with before or since: a cursor already says where the page starts.');
  }
  const query = {
    list: `items:children:${options.order}`,
    ...ORDERS[options.order],
    partitionValue: childrenPartition(access.item.id),
    limit: options.limit,
    before: options.before,
    since: options.since,
  };
  let toSkip = (options.page - 1) * options.limit;
  let cursor = options.before;
  while (toSkip > 0) {
    const step = Math.min(toSkip, SKIP_CHUNK);
    const skipped = await queryPage({ ...query, limit: step, before: cursor }, () => null);
    if (!skipped.nextCursor) return { items: [], hasMore: false, nextCursor: null, prevCursor: null };
    cursor = skipped.nextCursor;
    toSkip -= step;
  }
  const page = await queryPage({ ...query, before: cursor }, fromItem);
  return { ...page, items: page.items.map((item) => toFolderItem(item, access.role)) };
}

// ---------------------------------------------------------------------------------------------
// Create and rename

function requireDepth(depth: number, what: string): void {
  if (depth > MAX_FOLDER_DEPTH) {
    throw new UnprocessableError(
      `${what} would put a folder ${depth} levels below the workspace root; folders nest at most ${MAX_FOLDER_DEPTH} levels deep.`,
    );
  }
}

/** Creates a folder named exactly `name` under `parent` and marks activity on the parent, in one transaction. */
async function insertFolder(parent: FolderRecord, name: string, at = Date.now()): Promise<FolderRecord> {
  requireDepth(parent.ancestorIds.length + 1, 'Creating this folder');
  const record = newFolderRecord({ id: randomUUID(), workspaceId: parent.workspaceId, organizationId: parent.organizationId, name, parent, at });
  if (!(await insertFolderRecord(record, parent, at))) throw new NotFoundError(`Folder ${parent.id} does not exist.`);
  return record;
}

/**
 * POST /items: a folder under the parent. A sibling folder with the same name (case-insensitive)
 * makes it take `fallbackName`, else a numbered name (Move rule 4 applied to creation).
 */
export async function createFolder(parent: ItemAccess<FolderRecord>, input: { name: string; fallbackName?: string }): Promise<FolderItem> {
  const name = chooseFolderName(input.name, input.fallbackName, await new SiblingNames().of(parent.item.id));
  return toFolderItem(await insertFolder(parent.item, name), parent.role);
}

/** 422 for the workspace root and archive folders, which no operation may rename, move, archive or delete. */
function requireOrdinary(item: ItemRecord, action: string): void {
  if (item.kind === 'folder' && item.role !== 'folder') {
    throw new UnprocessableError(`The workspace ${item.role} folder cannot be ${action}.`);
  }
}

/**
 * PATCH /items/:id: renames a folder or markup (index keys follow through `toItem`). A folder may
 * not take a sibling folder's name: that is a 409, since the caller asked for that exact name.
 */
export async function renameItem(access: ItemAccess, name: string): Promise<void> {
  const { item } = access;
  requireOrdinary(item, 'renamed');
  if (item.kind === 'folder' && item.parentFolderId && lower(name) !== lower(item.name)) {
    const siblings = await subfolders(item.parentFolderId);
    if (siblings.some((sibling) => sibling.id !== item.id && lower(sibling.name) === lower(name))) {
      throw new ConflictError(`A folder named "${name}" already exists in this folder.`);
    }
  }
  const now = Date.now();
  if (!(await applyItemChange(item, { ...item, name, modifiedAt: now, activityAt: now }))) {
    throw new NotFoundError(`Item ${item.id} does not exist.`);
  }
}

// ---------------------------------------------------------------------------------------------
// Delete

/**
 * DELETE /items/:id: a markup, or a folder with everything below it. Markups go first, then
 * subfolders deepest level first, then the folder itself, so a run cut short leaves a smaller
 * but still connected tree that a repeated DELETE finishes: nothing is ever orphaned.
 */
export async function deleteItem(access: ItemAccess): Promise<void> {
  const { item } = access;
  requireOrdinary(item, 'deleted');
  if (item.kind === 'markup') {
    await deleteItemRecords([item]);
    return;
  }
  const folders = await descendantFolders(item);
  await deleteItemRecords(await markupsIn([item, ...folders]));
  const depths = [...new Set(folders.map((folder) => folder.ancestorIds.length))].sort((a, b) => b - a);
  for (const depth of depths) await deleteItemRecords(folders.filter((folder) => folder.ancestorIds.length === depth));
  await deleteItemRecords([item]);
}

// ---------------------------------------------------------------------------------------------
// Move

interface MoveOptions {
  fallbackName?: string;
  /** Archive records where the item came from; restore (null) forgets it; plain moves leave it. */
  archivedFromPath?: string[] | null;
  names?: SiblingNames;
  /** The item's subfolders when the caller already walked them. */
  descendants?: FolderRecord[];
}

/**
 * Checks Move rule 3 for a folder and returns its subfolders: the root and archive folders stay
 * put (422), a folder cannot go into itself or below itself (422), and the deepest folder of the
 * moved tree must stay within MAX_FOLDER_DEPTH (422).
 */
async function checkMovable(item: ItemRecord, destination: FolderRecord, descendants?: FolderRecord[]): Promise<FolderRecord[]> {
  requireOrdinary(item, 'moved');
  if (item.kind !== 'folder') return [];
  if (destination.id === item.id || destination.ancestorIds.includes(item.id)) {
    throw new UnprocessableError(`Folder ${item.id} cannot be moved into itself or into one of its own subfolders.`);
  }
  const below = descendants ?? (await descendantFolders(item));
  requireDepth(destination.ancestorIds.length + 1 + subtreeHeight(item, below), 'This move');
  return below;
}

/**
 * Moves one item under `destination`, keeping its id. The item (with a condition that it was not
 * moved meanwhile) and the destination's activity change in one transaction; then every folder
 * below gets its `ancestorIds` rebased and, across workspaces, every folder and markup below gets
 * the new `workspaceId` (markup index keys follow through `toItem`), in parallel diff updates.
 */
async function moveLoaded(item: ItemRecord, destination: FolderRecord, options: MoveOptions = {}): Promise<ItemRecord> {
  const descendants = await checkMovable(item, destination, options.descendants);
  if (destination.organizationId !== item.organizationId) {
    throw new ForbiddenError('Items move only between workspaces of the same organization.', 'workspace-out-of-scope');
  }
  // Already there: nothing changes, not even its name.
  if (item.parentFolderId === destination.id) return item;
  const names = options.names ?? new SiblingNames();
  const now = Date.now();
  const placed = {
    parentFolderId: destination.id,
    workspaceId: destination.workspaceId,
    modifiedAt: now,
    activityAt: now,
  };
  let next: ItemRecord;
  if (item.kind === 'folder') {
    const name = chooseFolderName(item.name, options.fallbackName, await names.of(destination.id));
    next = { ...item, ...placed, name, ancestorIds: [...destination.ancestorIds, destination.id] };
  } else {
    next = { ...item, ...placed };
  }
  if (options.archivedFromPath === null) delete next.archivedFromPath;
  else if (options.archivedFromPath) next.archivedFromPath = options.archivedFromPath;

  const outcome = await moveItemRecord(item, next, destination, now);
  if (outcome === 'item-changed') throw new ConflictError(`Item ${item.id} was moved or deleted by another request; read it again and retry.`);
  if (outcome === 'destination-gone') throw new NotFoundError(`Folder ${destination.id} does not exist.`);
  if (next.kind === 'folder') await names.claim(destination.id, next.name);
  await carryDescendants(item, next, descendants);
  return next;
}

/** The second half of a move: what lies below the moved item follows it (see `moveLoaded`). */
async function carryDescendants(before: ItemRecord, after: ItemRecord, descendants: readonly FolderRecord[]): Promise<void> {
  const crossWorkspace = before.workspaceId !== after.workspaceId;
  const workspaceId = after.workspaceId;
  if (before.kind === 'folder' && after.kind === 'folder') {
    await applyItemChanges(
      descendants.map((folder) => ({ current: folder, next: { ...folder, workspaceId, ancestorIds: rebaseAncestorIds(folder, before, after) } })),
    );
  }
  if (!crossWorkspace) return;
  const markups = before.kind === 'folder' ? await markupsIn([before, ...descendants]) : [];
  await applyItemChanges(markups.map((markup) => ({ current: markup, next: { ...markup, workspaceId } })));
  const withOriginals = [...markups, ...(before.kind === 'markup' ? [before] : [])].filter((markup) => markup.hasRetainedOriginal);
  await forEachLimit(withOriginals, TREE_CONCURRENCY, (markup) => moveOriginalToWorkspace(markup.id, workspaceId));
}

/** Move rule 1: only organization keys move items into another workspace (of their organization). */
function requireSameWorkspaceOrOrgKey(principal: Principal, sourceWorkspaceId: string, destination: FolderRecord): void {
  if (sourceWorkspaceId !== destination.workspaceId && principal.scope !== 'organization') {
    throw new ForbiddenError('Workspace-scoped keys move items only inside their own workspace.', 'workspace-out-of-scope');
  }
}

/** What a single move needs once authorized. */
export interface MoveRequest {
  source: ItemAccess;
  destination: ItemAccess<FolderRecord>;
}

/**
 * Authorization of PATCH /items/:id/move: both ends in scope (404/403), contributor or above at both
 * ends, and another workspace only for organization keys (Move rule 1).
 */
export async function authorizeMove(principal: Principal, itemId: string, parentFolderId: string): Promise<MoveRequest> {
  const [source, destination] = await Promise.all([
    loadItemForCaller(principal, itemId, { consistent: true }),
    loadFolderForCaller(principal, parentFolderId, { consistent: true }),
  ]);
  requireSameWorkspaceOrOrgKey(principal, source.item.workspaceId, destination.item);
  requireItemRole(source, 'contributor', 'move items');
  requireItemRole(destination, 'contributor', 'move items into this folder');
  return { source, destination };
}

/** PATCH /items/:id/move: the moved item, or the rule it breaks as an error (422 for Move rule 3). */
export async function moveItem(request: MoveRequest, fallbackName?: string): Promise<FolderItem> {
  const moved = await moveLoaded(request.source.item, request.destination.item, { fallbackName });
  return toFolderItem(moved, request.destination.role);
}

export interface MoveBatchRequest {
  destination: ItemAccess<FolderRecord>;
  /** The listed items that exist, by id (all in one workspace). */
  sources: Map<string, ItemRecord>;
  sourceWorkspaceId: string | undefined;
}

export interface MoveBatchResult {
  successes: FolderItem[];
  errors: { itemId: string; statusCode: number; message: string }[];
}

/**
 * Authorization of PATCH /items/move, before anything moves: an id listed twice is a 400, sources in
 * several workspaces are a 400 (Move rule 2), the destination must be reachable (404/403), the
 * sources' workspace in scope (403), another workspace only for organization keys (Move rule 1),
 * and the caller a contributor or above at both ends. Unknown sources are reported per item.
 */
export async function authorizeMoveBatch(principal: Principal, parentFolderId: string, itemIds: readonly string[]): Promise<MoveBatchRequest> {
  const duplicate = itemIds.find((id, index) => itemIds.indexOf(id) !== index);
  if (duplicate) throw new BadRequestError(`Item ${duplicate} is listed more than once.`);
  const found = await getItems([...itemIds]);
  const workspaceIds = [...new Set(found.map((item) => item.workspaceId))];
  if (workspaceIds.length > 1) {
    throw new BadRequestError(`All items of one move must come from the same workspace; these come from ${workspaceIds.length}: ${workspaceIds.join(', ')}.`, 'move-spans-workspaces');
  }
  const destination = await loadFolderForCaller(principal, parentFolderId, { consistent: true });
  requireItemRole(destination, 'contributor', 'move items into this folder');
  const [first] = found;
  if (first) {
    const source = await accessTo(principal, first);
    requireSameWorkspaceOrOrgKey(principal, first.workspaceId, destination.item);
    requireItemRole(source, 'contributor', 'move items');
  }
  return { destination, sources: new Map(found.map((item) => [item.id, item])), sourceWorkspaceId: workspaceIds[0] };
}

/**
 * PATCH /items/move: moves the items in the order listed; each failure lands in `errors` with its
 * status (404 unknown, 422 Move rule 3, 409 concurrent change) while the others still move (Move
 * rule 5). Each item is read again just before it moves, since an earlier entry may have carried it.
 */
export async function moveItems(request: MoveBatchRequest, entries: readonly { id: string; fallbackName?: string }[]): Promise<MoveBatchResult> {
  const result: MoveBatchResult = { successes: [], errors: [] };
  const names = new SiblingNames();
  for (const entry of entries) {
    try {
      const current = request.sources.has(entry.id) ? await getItem(entry.id, true) : undefined;
      if (!current) throw new NotFoundError(`Item ${entry.id} does not exist.`);
      // An earlier entry may have carried it into the destination's workspace; anywhere else, it moved under us.
      if (current.workspaceId !== request.sourceWorkspaceId && current.workspaceId !== request.destination.item.workspaceId) {
        throw new ConflictError(`Item ${entry.id} was moved to another workspace by another request.`);
      }
      const moved = await moveLoaded(current, request.destination.item, { fallbackName: entry.fallbackName, names });
      result.successes.push(toFolderItem(moved, request.destination.role));
    } catch (error) {
      if (!(error instanceof HttpError) || !error.expose) throw error;
      result.errors.push({ itemId: entry.id, statusCode: error.status, message: error.detail });
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Archive and restore

/** Ancestor folder ids of an item, root (or archive) first. */
function chainOf(item: ItemRecord, parents: ReadonlyMap<string, FolderRecord>): string[] {
  if (item.kind === 'folder') return item.ancestorIds;
  const parent = item.parentFolderId ? parents.get(item.parentFolderId) : undefined;
  return parent ? [...parent.ancestorIds, parent.id] : [];
}

/** Folders named `names` from `base` down, reusing a subfolder of the same name (case-insensitive) or creating it. */
async function ensurePath(base: FolderRecord, names: readonly string[], made: Map<string, FolderRecord>, siblings: SiblingNames): Promise<FolderRecord> {
  let current = base;
  for (const name of names) {
    const key = `${current.id}\u0001${lower(name)}`;
    let next = made.get(key);
    if (!next) {
      next = (await subfolders(current.id)).find((folder) => lower(folder.name) === lower(name)) ?? (await insertFolder(current, name));
      await siblings.claim(current.id, next.name);
      made.set(key, next);
    }
    current = next;
  }
  return current;
}

interface Relocation {
  item: ItemRecord;
  base: FolderRecord;
  path: string[];
  descendants: FolderRecord[];
}

/**
 * PATCH /items/archive and /items/restore. Everything is checked before anything moves: unknown
 * ids and scope were settled by `loadItemsForCaller`; here the root and archive folders are refused
 * (422) and each tree must fit MAX_FOLDER_DEPTH where it goes (422). Items already where the
 * operation would put them (archived ones on archive, live ones on restore) and items that travel
 * with a listed ancestor are left alone. Archive always remembers the folder path the item came
 * from (`archivedFromPath`); `withPath` re-creates that path under the archive folder (archive) or
 * under the root (restore), reusing folders with the same names.
 */
export async function relocateItems(accesses: readonly ItemAccess[], direction: 'archive' | 'restore', withPath: boolean): Promise<void> {
  for (const { item } of accesses) requireOrdinary(item, direction === 'archive' ? 'archived' : 'restored');
  const markupParents = accesses.flatMap(({ item }) => (item.kind === 'markup' && item.parentFolderId ? [item.parentFolderId] : []));
  const parents = new Map(
    (await getItems(markupParents)).filter((item): item is FolderRecord => item.kind === 'folder').map((folder) => [folder.id, folder]),
  );
  const listed = new Set(accesses.map(({ item }) => item.id));
  const chosen = accesses.filter(({ item, workspace }) => {
    const chain = chainOf(item, parents);
    const archived = chain[0] === workspace.archiveFolderId;
    const carried = chain.some((id) => listed.has(id));
    return !carried && (direction === 'archive' ? !archived : archived);
  });
  const workspaceFolders = new Map(
    (await getItems(chosen.flatMap(({ workspace }) => [workspace.rootFolderId, workspace.archiveFolderId]))).map((folder) => [folder.id, folder]),
  );
  const pathIds = direction === 'archive' ? chosen.flatMap(({ item }) => chainOf(item, parents).slice(1)) : [];
  const pathNames = new Map((await getItems(pathIds)).map((folder) => [folder.id, folder.name]));

  const plan: Relocation[] = [];
  for (const { item, workspace } of chosen) {
    const baseId = direction === 'archive' ? workspace.archiveFolderId : workspace.rootFolderId;
    const base = workspaceFolders.get(baseId);
    if (!base || base.kind !== 'folder') throw new NotFoundError(`The ${direction === 'archive' ? 'archive' : 'root'} folder of workspace ${workspace.id} is missing.`);
    const path =
      direction === 'archive'
        ? chainOf(item, parents).slice(1).flatMap((id) => pathNames.get(id) ?? [])
        : [...(item.archivedFromPath ?? [])];
    const descendants = item.kind === 'folder' ? await descendantFolders(item) : [];
    if (item.kind === 'folder') {
      const depth = (withPath ? path.length : 0) + 1 + subtreeHeight(item, descendants);
      requireDepth(depth, `${direction === 'archive' ? 'Archiving' : 'Restoring'} folder ${item.id}`);
    }
    plan.push({ item, base, path, descendants });
  }

  const made = new Map<string, FolderRecord>();
  const names = new SiblingNames();
  for (const { item, base, path, descendants } of plan) {
    const destination = withPath ? await ensurePath(base, path, made, names) : base;
    await moveLoaded(item, destination, { archivedFromPath: direction === 'archive' ? path : null, names, descendants });
  }
}
