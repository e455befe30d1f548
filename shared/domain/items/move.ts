import type { Principal } from '../../auth/principal.js';
import { AGAIN, withBackoff } from '../../db/backoff.js';
import { failIfArmed } from '../../db/faults.js';
import { clearStaleClaim } from '../../db/folder-names.js';
import { getItem, getItems, type FolderRecord, type ItemRecord } from '../../db/items.js';
import { moveItemRecord } from '../../db/item-writes.js';
import { BadRequestError, ConflictError, ForbiddenError, HttpError, NotFoundError, UnprocessableError } from '../../http/errors.js';
import { accessTo, loadFolderForCaller, loadItemForCaller, type ItemAccess } from './access.js';
import { chooseFolderName, lowerName } from './names.js';
import { insertMove, movesOutMarker } from '../../db/moves.js';
import type { TransactItem } from '../../db/transact.js';
import { enqueueMove } from '../../events/jobs.js';
import { logger } from '../../logger.js';
import { finishPendingMove, isRecordedMove, requeueIfStalled } from './pending-moves.js';
import { ancestryOf, descendantFolders, requireDepth, requireOrdinary, SiblingNames, subtreeHeight, type Ancestry } from './tree.js';
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
 * Folders one move within a workspace may carry along (their ancestor ids follow after the commit,
 * in the request; on the local stack under load a 2000-folder tree takes many seconds, so this keeps
 * such a move within the API's 30 s limit). A larger one is a 422 asking for the subfolders to be
 * moved first. A move into another workspace has no such bound: its worker carries the tree in
 * batches (`carryMoveBatch`).
 */
export const MAX_CARRIED_ITEMS = 2500;

/** Attempts of one move from fresh reads (a lost name claim, an ancestor moved meanwhile) before a 409. */
const MOVE_ATTEMPTS = 12;

/**
 * Checks Move rule 3 for a folder against the destination's ancestry as its parent links say:
 * the root and archive folders stay put (422), a folder cannot go into itself or below itself
 * (422), and the deepest folder of the moved tree must stay within MAX_FOLDER_DEPTH (422).
 * Answers the folder's subfolders.
 */
async function checkMovable(item: ItemRecord, to: Ancestry, descendants?: FolderRecord[]): Promise<FolderRecord[]> {
  requireOrdinary(item, 'moved');
  if (item.kind !== 'folder') return [];
  if (to.folder.id === item.id || to.ancestors.some((ancestor) => ancestor.id === item.id)) {
    throw new UnprocessableError(`Folder ${item.id} cannot be moved into itself or into one of its own subfolders.`);
  }
  const below = descendants ?? (await descendantFolders(item));
  requireDepth(to.ancestors.length + 1 + subtreeHeight(item, below), 'This move');
  return below;
}

/**
 * Whether a move carries anything along, and 422 when a move within one workspace would carry more
 * than MAX_CARRIED_ITEMS subfolders. A folder moved into another workspace always does (its tree
 * is carried by the move worker, however large).
 */
function requireCarriable(item: ItemRecord, descendants: readonly FolderRecord[], crossWorkspace: boolean): boolean {
  if (item.kind === 'markup') return crossWorkspace && item.hasRetainedOriginal;
  if (crossWorkspace) return true;
  requireCarriableCount(descendants.length);
  return descendants.length > 0;
}

function requireCarriableCount(count: number): void {
  if (count > MAX_CARRIED_ITEMS) {
    throw new UnprocessableError(
      `This move would carry ${count} folders along; one move within a workspace carries at most ${MAX_CARRIED_ITEMS}. Move the subfolders separately first.`,
    );
  }
}

/**
 * Moves one item under `destination`, keeping its id. One transaction moves the item (condition: not
 * moved meanwhile), claims a folder's name at the destination, marks the destination active, and
 * holds the destination's ancestry as read, so crossing moves cannot make a cycle (`moveItemRecord`).
 * What lies below follows after the commit: within a workspace in this request (`finishPendingMove`;
 * a move of an item whose earlier move is unfinished finishes that one first, so repeating an
 * interrupted request completes it); into another workspace, a folder's move is recorded in the same
 * transaction (`moves.ts`) and carried by the move worker, queued after the commit. Until the worker
 * is done the folder and the tree below it take no other move (409), and repeating the same move
 * answers the moved folder and queues its job again.
 */
export async function moveLoaded(item: ItemRecord, destination: FolderRecord, options: MoveOptions = {}): Promise<ItemRecord> {
  requireOrdinary(item, 'moved');
  if (destination.organizationId !== item.organizationId) {
    throw new ForbiddenError('Items move only between workspaces of the same organization.', 'workspace-out-of-scope');
  }
  const names = options.names ?? new SiblingNames();
  const lostNames = new Set<string>();
  return withBackoff(
    async () => {
      const current = item.pendingMoveFrom ? await finishPendingMove(item) : await getItem(item.id, true);
      if (!current) throw new NotFoundError(`Item ${item.id} does not exist.`);
      if (current.parentFolderId !== item.parentFolderId || current.workspaceId !== item.workspaceId) {
        throw new ConflictError(`Item ${item.id} was moved or deleted by another request; read it again and retry.`);
      }
      if (isRecordedMove(current)) {
        // The same move again (a retry of a request whose answer was lost): it is done as far as the caller goes.
        if (current.parentFolderId === destination.id) {
          await requeueIfStalled(current.id, { force: true });
          return current;
        }
        throw stillMoving(current as FolderRecord);
      }
      // A subfolder of a tree still being carried into another workspace stays in it until the worker is done.
      const carrying = current.kind === 'folder' && current.parentFolderId ? await carryingAbove(current.parentFolderId) : undefined;
      if (carrying) {
        await requeueIfStalled(carrying.id);
        throw stillMoving(carrying);
      }
      const to = await ancestryOf(destination.id);
      if (!to) throw new NotFoundError(`Folder ${destination.id} does not exist.`);
      const unfinished = [...to.ancestors, to.folder].filter((folder) => folder.pendingMoveFrom);
      const recorded = unfinished.find((folder) => isRecordedMove(folder));
      if (recorded) {
        await requeueIfStalled(recorded.id);
        throw stillMoving(recorded);
      }
      if (unfinished.length > 0) {
        for (const folder of unfinished) await finishPendingMove(folder);
        return AGAIN;
      }
      // Already there: nothing changes, not even its name.
      if (current.parentFolderId === to.folder.id) return current;
      const descendants = await checkMovable(current, to, options.descendants);
      // A tree still being carried below it stays where it is until the worker is done: moved along, the
      // carried folder would no longer be where its move said, and its items still in the source would
      // answer to the source again.
      const carryingBelow = descendants.find(isRecordedMove);
      if (carryingBelow) {
        await requeueIfStalled(carryingBelow.id);
        throw stillMoving(carryingBelow);
      }
      const crossWorkspace = to.folder.workspaceId !== current.workspaceId;
      const carries = requireCarriable(current, descendants, crossWorkspace);

      const next = placed(current, to.folder, options, current.kind === 'folder' ? await nameAt(names, to.folder.id, current.name, options.fallbackName, lostNames) : current.name);
      if (carries) next.pendingMoveFrom = current.workspaceId;
      const recordsMove = carries && crossWorkspace && next.kind === 'folder';
      const also = recordsMove ? recordOfMove(current, next) : [];
      const outcome = await moveItemRecord(current, next, to.folder, to.ancestors, next.modifiedAt, also);
      if (outcome === 'item-changed') throw new ConflictError(`Item ${item.id} was moved or deleted by another request; read it again and retry.`);
      if (outcome === 'ancestry-changed') return AGAIN;
      if (outcome === 'name-taken') {
        if (!(await clearStaleClaim(to.folder.id, next.name))) lostNames.add(lowerName(next.name));
        return AGAIN;
      }
      if (next.kind === 'folder') await names.claim(to.folder.id, next.name);
      if (!carries) return next;
      await failIfArmed('after-move-commit', item.id);
      if (recordsMove) {
        // The move is recorded: a job lost here is queued again by the next read or the local stack's start.
        await enqueueMove({ type: 'carry-move', folderId: next.id }).catch((error: unknown) => logger.error('move job not queued', { folderId: next.id, error }));
        return next;
      }
      return (await finishPendingMove(next)) ?? next;
    },
    { attempts: MOVE_ATTEMPTS, baseMs: 10, capMs: 200, exhausted: () => new ConflictError(`Item ${item.id} or the folders around it are being changed by other requests; try again.`) },
  );
}

/** The move record and the source workspace's marker, joined to the transaction of a folder's move into another workspace. */
function recordOfMove(current: ItemRecord, next: ItemRecord): TransactItem[] {
  const at = Date.now();
  const record = {
    folderId: current.id,
    organizationId: current.organizationId,
    fromWorkspaceId: current.workspaceId,
    toWorkspaceId: next.workspaceId,
    state: 'carrying' as const,
    createdAt: at,
    updatedAt: at,
    carriedFolders: 0,
    carriedMarkups: 0,
    batches: 0,
  };
  return [insertMove(record), movesOutMarker(current.workspaceId, current.id, next.workspaceId)];
}

/** The folder of `folderId`'s chain (itself or above, by parent links) whose move into another workspace is being carried. */
async function carryingAbove(folderId: string): Promise<FolderRecord | undefined> {
  const chain = await ancestryOf(folderId);
  return chain ? [...chain.ancestors, chain.folder].find((folder) => isRecordedMove(folder)) : undefined;
}

/** 409 for a folder (or a tree below one) whose move into another workspace is still being carried. */
function stillMoving(folder: FolderRecord): ConflictError {
  return new ConflictError(`Folder ${folder.id} is still being moved into another workspace; try again in a few seconds.`);
}

/** The name a moved folder takes at the destination (Move rule 4), skipping names this request lost to others. */
async function nameAt(names: SiblingNames, folderId: string, name: string, fallbackName: string | undefined, lost: ReadonlySet<string>): Promise<string> {
  const taken = new Set([...(await names.of(folderId)), ...lost]);
  return chooseFolderName(name, fallbackName, taken);
}

/** The item's record once under `destination` (same id; a folder with the new ancestry). */
function placed(item: ItemRecord, destination: FolderRecord, options: MoveOptions, name: string): ItemRecord {
  const now = Math.max(Date.now(), item.modifiedAt + 1);
  const place = { parentFolderId: destination.id, workspaceId: destination.workspaceId, modifiedAt: now, activityAt: now, name };
  const next: ItemRecord =
    item.kind === 'folder' ? { ...item, ...place, ancestorIds: [...destination.ancestorIds, destination.id] } : { ...item, ...place };
  if (options.archivedFromPath === null) delete next.archivedFromPath;
  else if (options.archivedFromPath) next.archivedFromPath = options.archivedFromPath;
  return next;
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
 * Authorization of PATCH /items/:id/move: both ends in scope (404/403), the route's permission at
 * both ends, and another workspace only for organization keys (Move rule 1).
 */
export async function authorizeMove(principal: Principal, itemId: string, parentFolderId: string): Promise<MoveRequest> {
  const [source, destination] = await Promise.all([
    loadItemForCaller(principal, itemId, { consistent: true }),
    loadFolderForCaller(principal, parentFolderId, { consistent: true }),
  ]);
  requireSameWorkspaceOrOrgKey(principal, source.item.workspaceId, destination.item);
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
 * and the route's permission at both ends. Unknown sources are reported per item.
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
  const [first] = found;
  if (first) {
    await accessTo(principal, first);
    requireSameWorkspaceOrOrgKey(principal, first.workspaceId, destination.item);
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
