import type { Principal } from '../../auth/principal.js';
import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import { failIfArmed } from '../../db/core/faults.js';
import { clearStaleClaim } from '../../db/folder-names.js';
import { getItem, getItems, type FolderRecord, type ItemRecord } from '../../db/items.js';
import { moveItemRecord } from '../../db/item-writes.js';
import { ConflictError } from '../../errors.js';
import { accessTo, loadFolderForCaller, loadItemForCaller, type ItemAccess } from './access.js';
import { chooseFolderName, lowerName } from './names.js';
import { insertMove, movesOutMarker } from '../../db/moves.js';
import type { TransactItem } from '../../db/core/transact.js';
import { enqueueMove } from '../../events/jobs.js';
import { logger } from '../../logger.js';
import { finishPendingMove, requeueIfStalled } from './pending-moves.js';
import {
  alreadyThere,
  batchErrorOf,
  carriedIn,
  commitVerdict,
  destinationVerdict,
  folderBeingDeleted,
  followUp,
  isRecordedMove,
  movePlan,
  placed,
  requireBatchEntry,
  requireDepthAfterMove,
  requireDistinct,
  requireMovableTo,
  requireNotIntoItself,
  requireOneWorkspace,
  requireSameWorkspaceOrOrgKey,
  sourceVerdict,
  stillMoving,
  type MoveBatchError,
} from './move-rules.js';
import { ancestryOf, descendantFolders, SiblingNames, type Ancestry } from './tree.js';
import { toFolderItem, type FolderItem } from './views.js';

export interface MoveOptions {
  fallbackName?: string;
  /** Archive records where the item came from; restore (null) forgets it; plain moves leave it. */
  archivedFromPath?: string[] | null;
  names?: SiblingNames;
  /** The item's subfolders when the caller already walked them. */
  descendants?: FolderRecord[];
}

export { MAX_CARRIED_ITEMS } from './move-rules.js';

/** Attempts of one move from fresh reads (a lost name claim, an ancestor moved meanwhile) before a 409. */
const MOVE_ATTEMPTS = 12;

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
  requireMovableTo(item, destination);
  const names = options.names ?? new SiblingNames();
  const lostNames = new Set<string>();
  return withBackoff(
    async () => {
      const source = sourceVerdict(
        item,
        item.pendingMoveFrom ? await finishPendingMove(item) : await getItem(item.id, true),
        destination.id,
      );
      if (source.kind === 'repeated') {
        await requeueIfStalled(source.current.id, { force: true });
        return source.current;
      }
      const { current } = source;
      // A subfolder of a tree still being carried into another workspace stays in it until the worker is done.
      const carrying =
        current.kind === 'folder' && current.parentFolderId ? carriedIn(await ancestryOf(current.parentFolderId)) : undefined;
      if (carrying) throw await stillMovingOnceQueued(carrying);
      const there = destinationVerdict(destination.id, await ancestryOf(destination.id));
      if (there.kind === 'carrying') throw await stillMovingOnceQueued(there.folder);
      if (there.kind === 'unfinished') {
        for (const folder of there.folders) await finishPendingMove(folder);
        return AGAIN;
      }
      const { to } = there;
      const deleting = [...to.ancestors, to.folder].find((folder) => folder.deletingSince !== undefined);
      if (deleting) throw folderBeingDeleted(deleting.id);
      if (alreadyThere(current, to)) return current;
      const descendants = requireNotIntoItself(current, to) ? await subfoldersWithin(current, to, options.descendants) : [];
      // A tree still being carried below it stays where it is until the worker is done: moved along, the
      // carried folder would no longer be where its move said, and its items still in the source would
      // answer to the source again.
      const carryingBelow = descendants.find(isRecordedMove);
      if (carryingBelow) throw await stillMovingOnceQueued(carryingBelow);
      const plan = movePlan(current, to.folder, descendants);

      const name =
        current.kind === 'folder' ? await nameAt(names, to.folder.id, current.name, options.fallbackName, lostNames) : current.name;
      const next = placed(current, to.folder, { name, archivedFromPath: options.archivedFromPath, carries: plan.carries });
      const also = plan.recordsMove ? recordOfMove(current, next) : [];
      const verdict = commitVerdict(item.id, await moveItemRecord(current, next, to.folder, to.ancestors, next.modifiedAt, also));
      if (verdict === 'again') return AGAIN;
      if (verdict === 'name-taken') {
        if (!(await clearStaleClaim(to.folder.id, next.name))) lostNames.add(lowerName(next.name));
        return AGAIN;
      }
      if (next.kind === 'folder') await names.claim(to.folder.id, next.name);
      const then = followUp(plan);
      if (then === 'none') return next;
      await failIfArmed('after-move-commit', item.id);
      if (then === 'queue-worker') {
        // The move is recorded: a job lost here is queued again by the next read or the local stack's start.
        await enqueueMove({ type: 'carry-move', folderId: next.id }).catch((error: unknown) =>
          logger.error('move job not queued', { folderId: next.id, error }),
        );
        return next;
      }
      return (await finishPendingMove(next)) ?? next;
    },
    {
      attempts: MOVE_ATTEMPTS,
      baseMs: 10,
      capMs: 200,
      exhausted: () => new ConflictError(`Item ${item.id} or the folders around it are being changed by other requests; try again.`),
    },
  );
}

/** A moved folder's subfolders (read unless the caller walked them), once the depth they reach under `to` is checked (Move rule 3, 422). */
async function subfoldersWithin(folder: FolderRecord, to: Ancestry, descendants?: FolderRecord[]): Promise<FolderRecord[]> {
  const below = descendants ?? (await descendantFolders(folder));
  requireDepthAfterMove(folder, to, below);
  return below;
}

/** The 409 for a folder whose move into another workspace is still being carried, after its job is queued again if it stalled. */
async function stillMovingOnceQueued(folder: FolderRecord): Promise<ConflictError> {
  await requeueIfStalled(folder.id);
  return stillMoving(folder);
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

/** The name a moved folder takes at the destination (Move rule 4), skipping names this request lost to others. */
async function nameAt(
  names: SiblingNames,
  folderId: string,
  name: string,
  fallbackName: string | undefined,
  lost: ReadonlySet<string>,
): Promise<string> {
  const taken = new Set([...(await names.of(folderId)), ...lost]);
  return chooseFolderName(name, fallbackName, taken);
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
  errors: MoveBatchError[];
}

/**
 * Authorization of PATCH /items/move, before anything moves: an id listed twice is a 400, sources in
 * several workspaces are a 400 (Move rule 2), the destination must be reachable (404/403), the
 * sources' workspace in scope (403), another workspace only for organization keys (Move rule 1),
 * and the route's permission at both ends. Unknown sources are reported per item.
 */
export async function authorizeMoveBatch(
  principal: Principal,
  parentFolderId: string,
  itemIds: readonly string[],
): Promise<MoveBatchRequest> {
  requireDistinct(itemIds);
  const found = await getItems([...itemIds]);
  const sourceWorkspaceId = requireOneWorkspace(found);
  const destination = await loadFolderForCaller(principal, parentFolderId, { consistent: true });
  const [first] = found;
  if (first) {
    await accessTo(principal, first);
    requireSameWorkspaceOrOrgKey(principal, first.workspaceId, destination.item);
  }
  return { destination, sources: new Map(found.map((item) => [item.id, item])), sourceWorkspaceId };
}

/**
 * PATCH /items/move: moves the items in the order listed; each failure lands in `errors` with its
 * status (404 unknown, 422 Move rule 3, 409 concurrent change) while the others still move (Move
 * rule 5). Each item is read again just before it moves, since an earlier entry may have carried it.
 */
export async function moveItems(
  request: MoveBatchRequest,
  entries: readonly { id: string; fallbackName?: string }[],
): Promise<MoveBatchResult> {
  const result: MoveBatchResult = { successes: [], errors: [] };
  const names = new SiblingNames();
  for (const entry of entries) {
    try {
      const found = request.sources.has(entry.id) ? await getItem(entry.id, true) : undefined;
      const current = requireBatchEntry(entry.id, found, request.sourceWorkspaceId, request.destination.item);
      const moved = await moveLoaded(current, request.destination.item, { fallbackName: entry.fallbackName, names });
      result.successes.push(toFolderItem(moved, request.destination.role));
    } catch (error) {
      const refused = batchErrorOf(entry.id, error);
      if (!refused) throw error;
      result.errors.push(refused);
    }
  }
  return result;
}
