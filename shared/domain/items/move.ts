import type { Principal } from '../../auth/principal.js';
import { forEachLimit } from '../../concurrency.js';
import { getItem, getItems, type FolderRecord, type ItemRecord } from '../../db/items.js';
import { applyItemChanges, moveItemRecord } from '../../db/item-writes.js';
import { failIfArmed } from '../../db/faults.js';
import { moveOriginalToWorkspace } from '../../db/originals.js';
import { BadRequestError, ConflictError, ForbiddenError, HttpError, NotFoundError, UnprocessableError } from '../../http/errors.js';
import { accessTo, loadFolderForCaller, loadItemForCaller, requireItemRole, type ItemAccess } from './access.js';
import { chooseFolderName } from './names.js';
import { descendantFolders, markupsIn, rebaseAncestorIds, requireDepth, requireOrdinary, SiblingNames, subtreeHeight, TREE_CONCURRENCY } from './tree.js';
import { toFolderItem, type FolderItem } from './views.js';

export interface MoveOptions {
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
export async function moveLoaded(item: ItemRecord, destination: FolderRecord, options: MoveOptions = {}): Promise<ItemRecord> {
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
  await failIfArmed('after-move-commit', item.id);
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
