import type { Principal } from '../../auth/principal.js';
import type { FolderRecord, ItemRecord } from '../../db/items.js';
import { BadRequestError, ConflictError, ForbiddenError, ServiceError, NotFoundError, UnprocessableError } from '../../errors.js';
import { requireDepth, requireOrdinary, subtreeHeight, type Ancestry } from './tree.js';

/**
 * The move rules (spec "Move rules") as a functional core: each function gets what the shell
 * (move.ts) read (the item as requested and as it is now, the destination's ancestry as its parent
 * links say, the moved folder's subfolders, the caller's principal, the commit's outcome) and
 * answers the verdict, or throws the error the caller sees. None reads or writes, so
 * test/unit/move-rules.test.ts checks them without emulators; move.ts reads, asks, and commits.
 */

/**
 * Folders one move within a workspace may carry along (their ancestor ids follow after the commit,
 * in the request; on the local stack under load a 2000-folder tree takes many seconds, so this keeps
 * such a move within the API's 30 s limit). A larger one is a 422 asking for the subfolders to be
 * moved first. A move into another workspace has no such bound: its worker carries the tree in
 * batches (`carryMoveBatch`).
 */
export const MAX_CARRIED_ITEMS = 2500;

/** True for a folder whose move into another workspace is recorded and not yet carried (the worker's, not the request's). */
export const isRecordedMove = (item: ItemRecord): boolean =>
  item.kind === 'folder' && item.pendingMoveFrom !== undefined && item.pendingMoveFrom !== item.workspaceId;

/** Move rule 1: only organization keys move items into another workspace (of their organization). */
export function requireSameWorkspaceOrOrgKey(principal: Principal, sourceWorkspaceId: string, destination: FolderRecord): void {
  if (sourceWorkspaceId !== destination.workspaceId && principal.scope !== 'organization') {
    throw new ForbiddenError('Workspace-scoped keys move items only inside their own workspace.', 'workspace-out-of-scope');
  }
}

/** Items move only between workspaces of one organization (403), whatever the key; the root and archive folders never (422). */
export function requireMovableTo(item: ItemRecord, destination: FolderRecord): void {
  requireOrdinary(item, 'moved');
  if (destination.organizationId !== item.organizationId) {
    throw new ForbiddenError('Items move only between workspaces of the same organization.', 'workspace-out-of-scope');
  }
}

/** A batch lists each item once (400), checked before anything is read. */
export function requireDistinct(itemIds: readonly string[]): void {
  const duplicate = itemIds.find((id, index) => itemIds.indexOf(id) !== index);
  if (duplicate) throw new BadRequestError(`Item ${duplicate} is listed more than once.`);
}

/** Move rule 2: the sources of a batch that exist lie in one workspace (400 otherwise), which this answers. */
export function requireOneWorkspace(found: readonly ItemRecord[]): string | undefined {
  const workspaceIds = [...new Set(found.map((item) => item.workspaceId))];
  if (workspaceIds.length > 1) {
    throw new BadRequestError(
      `All items of one move must come from the same workspace; these come from ${workspaceIds.length}: ${workspaceIds.join(', ')}.`,
      'move-spans-workspaces',
    );
  }
  return workspaceIds[0];
}

/** 409 for a folder (or a tree below one) whose move into another workspace is still being carried. */
export function stillMoving(folder: FolderRecord): ConflictError {
  return new ConflictError(`Folder ${folder.id} is still being moved into another workspace; try again in a few seconds.`);
}

/** What becomes of a move given the item as it is now. */
export type SourceVerdict =
  /** Go on with the item as read. */
  | { kind: 'move'; current: ItemRecord }
  /** The same move again (a retry of a request whose answer was lost): done as far as the caller goes; its job is queued again. */
  | { kind: 'repeated'; current: FolderRecord };

/**
 * The item as read just before it moves (`current`, undefined when gone: 404) against the item the
 * request authorized (`requested`): moved or deleted meanwhile is a 409; a folder whose move into
 * another workspace is still carried is the same move again when it goes where this one goes,
 * otherwise a 409.
 */
export function sourceVerdict(requested: ItemRecord, current: ItemRecord | undefined, destinationId: string): SourceVerdict {
  if (!current) throw new NotFoundError(`Item ${requested.id} does not exist.`);
  if (current.parentFolderId !== requested.parentFolderId || current.workspaceId !== requested.workspaceId) {
    throw movedMeanwhile(requested.id);
  }
  if (isRecordedMove(current)) {
    if (current.parentFolderId === destinationId) return { kind: 'repeated', current: current as FolderRecord };
    throw stillMoving(current as FolderRecord);
  }
  return { kind: 'move', current };
}

const movedMeanwhile = (itemId: string) =>
  new ConflictError(`Item ${itemId} was moved or deleted by another request; read it again and retry.`);

/** The folder of a chain (a folder and the folders above it) whose move into another workspace is being carried. */
export function carriedIn(chain: Ancestry | undefined): FolderRecord | undefined {
  return chain ? [...chain.ancestors, chain.folder].find((folder) => isRecordedMove(folder)) : undefined;
}

/** What becomes of a move given the destination's ancestry. */
export type DestinationVerdict =
  | { kind: 'ready'; to: Ancestry }
  /** A folder of the chain is being carried into another workspace: 409 (`stillMoving`) once its job is queued again if stalled. */
  | { kind: 'carrying'; folder: FolderRecord }
  /** Folders of the chain whose move within a workspace is unfinished: finish them, then try again from fresh reads. */
  | { kind: 'unfinished'; folders: FolderRecord[] };

/** The destination folder `destinationId` with its ancestry as read (undefined: no such folder, 404). */
export function destinationVerdict(destinationId: string, to: Ancestry | undefined): DestinationVerdict {
  if (!to) throw new NotFoundError(`Folder ${destinationId} does not exist.`);
  const unfinished = [...to.ancestors, to.folder].filter((folder) => folder.pendingMoveFrom);
  const recorded = unfinished.find((folder) => isRecordedMove(folder));
  if (recorded) return { kind: 'carrying', folder: recorded };
  if (unfinished.length > 0) return { kind: 'unfinished', folders: unfinished };
  return { kind: 'ready', to };
}

/** Already under the destination: nothing changes, not even its name. */
export const alreadyThere = (item: ItemRecord, to: Ancestry): boolean => item.parentFolderId === to.folder.id;

/**
 * Move rule 3, before the moved tree is read: the root and archive folders stay put (422), and a
 * folder cannot go into itself or below itself (422). True when the item is a folder, whose
 * subfolders the depth check (`requireDepthAfterMove`) then needs.
 */
export function requireNotIntoItself(item: ItemRecord, to: Ancestry): item is FolderRecord {
  requireOrdinary(item, 'moved');
  if (item.kind !== 'folder') return false;
  if (to.folder.id === item.id || to.ancestors.some((ancestor) => ancestor.id === item.id)) {
    throw new UnprocessableError(`Folder ${item.id} cannot be moved into itself or into one of its own subfolders.`);
  }
  return true;
}

/** Move rule 3: the deepest folder of the moved tree must stay within MAX_FOLDER_DEPTH (422). */
export function requireDepthAfterMove(folder: FolderRecord, to: Ancestry, below: readonly FolderRecord[]): void {
  requireDepth(to.ancestors.length + 1 + subtreeHeight(folder, below), 'This move');
}

/** What a move does beyond the item's own record. */
export interface MovePlan {
  crossWorkspace: boolean;
  /** Something follows the item after the commit (`pendingMoveFrom` is set on it). */
  carries: boolean;
  /** A folder into another workspace: the move is recorded in its transaction and carried by the move worker. */
  recordsMove: boolean;
}

/**
 * What a move carries along: a markup into another workspace its retained original; a folder into
 * another workspace always its tree (however large: the worker carries it); a folder within one
 * workspace its subfolders, at most MAX_CARRIED_ITEMS of them (422 beyond).
 */
export function movePlan(item: ItemRecord, destination: FolderRecord, descendants: readonly FolderRecord[]): MovePlan {
  const crossWorkspace = destination.workspaceId !== item.workspaceId;
  let carries: boolean;
  if (item.kind === 'markup') carries = crossWorkspace && item.hasRetainedOriginal;
  else if (crossWorkspace) carries = true;
  else {
    requireCarriableCount(descendants.length);
    carries = descendants.length > 0;
  }
  return { crossWorkspace, carries, recordsMove: carries && crossWorkspace && item.kind === 'folder' };
}

function requireCarriableCount(count: number): void {
  if (count > MAX_CARRIED_ITEMS) {
    throw new UnprocessableError(
      `This move would carry ${count} folders along; one move within a workspace carries at most ${MAX_CARRIED_ITEMS}. Move the subfolders separately first.`,
    );
  }
}

/** Where an item lands and what it records about where it came from. */
export interface Placement {
  name: string;
  /** Archive records where the item came from; restore (null) forgets it; plain moves leave it. */
  archivedFromPath?: string[] | null;
  /** Set when the move carries something along (`MovePlan.carries`): the workspace it comes from. */
  carries: boolean;
}

/** The item's record once under `destination` (same id; a folder with the new ancestry), modified at `now` (later than its last change). */
export function placed(item: ItemRecord, destination: FolderRecord, placement: Placement, now = Date.now()): ItemRecord {
  const at = Math.max(now, item.modifiedAt + 1);
  const place = {
    parentFolderId: destination.id,
    workspaceId: destination.workspaceId,
    modifiedAt: at,
    activityAt: at,
    name: placement.name,
  };
  const next: ItemRecord =
    item.kind === 'folder' ? { ...item, ...place, ancestorIds: [...destination.ancestorIds, destination.id] } : { ...item, ...place };
  if (placement.archivedFromPath === null) delete next.archivedFromPath;
  else if (placement.archivedFromPath) next.archivedFromPath = placement.archivedFromPath;
  if (placement.carries) next.pendingMoveFrom = item.workspaceId;
  return next;
}

/** The outcome of the move's transaction (`moveItemRecord`). */
export type CommitOutcome = 'moved' | 'item-changed' | 'ancestry-changed' | 'name-taken' | 'source-deleting';

/** A move into or out of a folder whose deletion has begun: it would be deleted with it, or left without a parent. */
export const folderBeingDeleted = (folderId: string) =>
  new ConflictError(`Folder ${folderId} is being deleted: nothing moves into or out of it.`, 'folder-being-deleted');

/** The same refusal for a move out, where the folder left is known only by the transaction's check (`what`: the item or items moved). */
export const sourceBeingDeleted = (what: string) =>
  new ConflictError(`A folder ${what} is in is being deleted: nothing moves out of it.`, 'folder-being-deleted');

/**
 * What the shell does after the transaction: `done` (committed), `again` from fresh reads (an
 * ancestor moved meanwhile, or the name was claimed meanwhile: `name-taken`, the shell then clears
 * a stale claim or forgets the name); the item itself changed is a 409.
 */
export function commitVerdict(itemId: string, outcome: CommitOutcome): 'done' | 'again' | 'name-taken' {
  if (outcome === 'item-changed') throw movedMeanwhile(itemId);
  if (outcome === 'source-deleting') throw sourceBeingDeleted(`item ${itemId}`);
  if (outcome === 'ancestry-changed') return 'again';
  if (outcome === 'name-taken') return 'name-taken';
  return 'done';
}

/** What follows a committed move: nothing, the move worker (queued), or the rest of the tree in this request. */
export function followUp(plan: MovePlan): 'none' | 'queue-worker' | 'finish-here' {
  if (!plan.carries) return 'none';
  return plan.recordsMove ? 'queue-worker' : 'finish-here';
}

/**
 * Before each entry of a batch moves, the item read again: unknown (or not listed among the
 * sources found) is a 404; an earlier entry may have carried it into the destination's workspace,
 * but anywhere else it moved under us (409).
 */
export function requireBatchEntry(
  entryId: string,
  current: ItemRecord | undefined,
  sourceWorkspaceId: string | undefined,
  destination: FolderRecord,
): ItemRecord {
  if (!current) throw new NotFoundError(`Item ${entryId} does not exist.`);
  if (current.workspaceId !== sourceWorkspaceId && current.workspaceId !== destination.workspaceId) {
    throw new ConflictError(`Item ${entryId} was moved to another workspace by another request.`);
  }
  return current;
}

/** One entry of a batch's `errors` (Move rule 5).  */
export interface MoveBatchError {
  itemId: string;
  statusCode: number;
  message: string;
}

/**
 * The `errors` entry for an entry's failure (Move rule 5): a problem the caller may see; anything else (a 5xx, a fault) fails the whole
 * batch (undefined).
 */
export function batchErrorOf(itemId: string, error: unknown): MoveBatchError | undefined {
  if (!(error instanceof ServiceError) || !error.expose) return undefined;
  return { itemId, statusCode: error.status, message: error.detail };
}
