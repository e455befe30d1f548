import { forEachLimit } from '../../concurrency.js';
import { getConfig } from '../../config.js';
import { applyItemChanges, carryItemRecord, clearPendingMove } from '../../db/item-writes.js';
import { childrenPartition, fromItem, getItem, getItems, type FolderRecord, type ItemRecord, type MarkupRecord } from '../../db/items.js';
import { clearMovesOut, finishMove, getMove, pendingMoves, recordMoveBatch, touchMove, type MoveRecord } from '../../db/moves.js';
import { moveOriginalToWorkspace } from '../../db/originals.js';
import { queryMatching } from '../../db/core/paging.js';
import { getWorkspace, type WorkspaceRecord } from '../../db/workspaces.js';
import { enqueueMove } from '../../events/jobs.js';
import { logger } from '../../logger.js';
import { isRecordedMove } from './move-rules.js';
import { descendantFolders, TREE_CONCURRENCY } from './tree.js';

/**
 * A move commits the moved item alone, marked `pendingMoveFrom`; what it carries (the folders
 * below with their `ancestorIds` and workspace, the markups below, retained originals) follows
 * after. Every step here is computed from the stored state and writes only differences, each
 * conditional on the item still being where it was read, so running it again, after a failure or
 * in two places at once, finishes the same move and harms nothing.
 *
 * A folder moved into another workspace is recorded (`moves.ts`: the move record and the source
 * workspace's `movesOut` marker, in the move's own transaction) and carried by the move worker in
 * bounded batches (`carryMoveBatch`). Until it is done, an item of the tree still stored in the
 * source workspace is carried alone the moment anyone reaches it (`settleItems`), so it answers to
 * the destination's credentials only from the move's response on.
 */

/** Records one worker batch writes at most (folders first, then markups). */
export const MOVE_BATCH_ITEMS = 1000;
/** A recorded move with no batch for this long is queued again by the next read that reaches it (its job was lost). */
export const MOVE_STALL_MS = 10_000;
/** After a batch that found nothing left, the last check waits this long, so the indexes show what the move's commit raced with. */
export const MOVE_RECHECK_SECONDS = 1;

export { isRecordedMove };

/** The subtree below a moved folder made to agree with it within one workspace: ancestor ids, top down. */
async function rebaseSubtree(folder: FolderRecord): Promise<void> {
  await applyItemChanges(carriedFolders(folder, await descendantFolders(folder)));
}

/** The changes that make `descendants` agree with `folder` (workspace and ancestor ids), top down; only those that differ. */
function carriedFolders(folder: FolderRecord, descendants: readonly FolderRecord[]): { current: FolderRecord; next: FolderRecord }[] {
  const workspaceId = folder.workspaceId;
  // descendantFolders answers level by level, so a parent's ancestor ids are known before its children's.
  const ancestorIds = new Map<string, string[]>([[folder.id, folder.ancestorIds]]);
  return descendants.flatMap((current) => {
    const parentId = current.parentFolderId!;
    const next = { ...current, workspaceId, ancestorIds: [...ancestorIds.get(parentId)!, parentId] };
    ancestorIds.set(current.id, next.ancestorIds);
    const same = current.workspaceId === workspaceId && current.ancestorIds.join() === next.ancestorIds.join();
    return same ? [] : [{ current, next }];
  });
}

/**
 * Finishes the pending move of `item` that a request may finish itself (a move within one
 * workspace: subfolders' ancestor ids; a markup's retained original), and answers the item as now
 * stored (undefined when it is gone). A recorded cross-workspace move is the worker's: it is only
 * queued again when it stalled. Idempotent: see above.
 */
export async function finishPendingMove(item: Pick<ItemRecord, 'id'>): Promise<ItemRecord | undefined> {
  const current = await getItem(item.id, true);
  if (!current?.pendingMoveFrom) return current;
  if (isRecordedMove(current)) {
    await requeueIfStalled(current.id);
    return current;
  }
  if (current.kind === 'folder') await rebaseSubtree(current);
  else if (current.hasRetainedOriginal && current.pendingMoveFrom !== current.workspaceId)
    await moveOriginalToWorkspace(current.id, current.workspaceId);
  await clearPendingMove(current);
  return getItem(item.id, true);
}

/**
 * Finishes every pending move that `item` is part of: its own and those of the folders above it
 * (for a folder, its `ancestorIds`; one BatchGet). True when one was finished, so the caller reads
 * again; a recorded cross-workspace move is left to the worker (and queued again if it stalled).
 */
export async function finishMovesAround(item: ItemRecord): Promise<boolean> {
  const above = item.kind === 'folder' ? await getItems(item.ancestorIds, true) : [];
  const pending = [...above, item].filter((candidate) => candidate.pendingMoveFrom);
  let finished = false;
  for (const folder of pending) {
    await finishPendingMove(folder);
    finished ||= !isRecordedMove(folder);
  }
  return finished;
}

/**
 * Queues the recorded move of `folderId` again when no batch of it ran for MOVE_STALL_MS (its job
 * was lost between the move's commit and its enqueue, or with a crashed worker), or at once with
 * `force` (a repeated move request). Only functions granted the moves queue queue; the others
 * leave it to the next of those, to the local stack's start and to the worker's own chain.
 */
export async function requeueIfStalled(folderId: string, options: { force?: boolean } = {}): Promise<void> {
  if (!getConfig().moveQueueUrl) return;
  const move = await getMove(folderId);
  if (move && move.state === 'carrying' && !options.force && Date.now() - move.updatedAt < MOVE_STALL_MS) return;
  // A done (or missing) record with the folder still marked: the worker clears the mark.
  if (move && move.state === 'carrying' && !(await touchMove(folderId, move.updatedAt)) && !options.force) return;
  await enqueueMove({ type: 'carry-move', folderId });
}

/**
 * Queues again every recorded move still carrying whose last batch ran before `stalledBefore` (all
 * of them without it): the pending-work sweep does this on its schedule, so a move whose job was
 * lost between its commit and its enqueue (or with a crashed worker) is finished even if nobody
 * reads its tree, and with every move as the local stack starts, since the job may have been lost
 * with the process. A job queued twice is harmless (the worker is idempotent per item). Answers how many.
 */
export async function requeuePendingMoves(options: { stalledBefore?: number } = {}): Promise<number> {
  const moves = (await pendingMoves()).filter((move) => options.stalledBefore === undefined || move.updatedAt < options.stalledBefore);
  for (const move of moves) await enqueueMove({ type: 'carry-move', folderId: move.folderId });
  return moves.length;
}

/** The markups below `folders` not yet in `workspaceId`, up to `limit`, read from the children index. */
async function markupsToCarry(folders: readonly FolderRecord[], workspaceId: string, limit: number): Promise<MarkupRecord[]> {
  const found: MarkupRecord[] = [];
  for (const folder of folders) {
    const matching = queryMatching('GSI1', childrenPartition(folder.id), {
      expression: '#kind = :markup AND #ws <> :ws',
      names: { '#kind': 'kind', '#ws': 'workspaceId' },
      values: { ':markup': 'markup', ':ws': workspaceId },
    });
    for await (const item of matching) {
      found.push(fromItem(item) as MarkupRecord);
      if (found.length >= limit) return found;
    }
  }
  return found;
}

/** What one batch of a recorded move did: more may be left, nothing was left once (check again shortly), or it is done. */
export type MoveBatchOutcome = 'continue' | 'recheck' | 'done';

/**
 * One bounded batch of the recorded move of `folderId` (the move worker's job): up to
 * MOVE_BATCH_ITEMS subfolders (workspace, rebased ancestor ids) and markups (retained original
 * first, then the record) are carried into the destination, each by a write conditional on its
 * still being in the source, and counted on the move record. A batch that finds nothing left asks
 * for one more check; the second finishes the move: the source's marker, then the record, then the
 * folder's `pendingMoveFrom` (last, so no new move of the folder starts before).
 */
export async function carryMoveBatch(folderId: string): Promise<MoveBatchOutcome> {
  const [move, folder] = await Promise.all([getMove(folderId), getItem(folderId, true)]);
  if (!move || move.state === 'done') {
    if (folder && isRecordedMove(folder)) await clearPendingMove(folder);
    return 'done';
  }
  if (folder?.kind !== 'folder' || folder.pendingMoveFrom !== move.fromWorkspaceId || folder.workspaceId !== move.toWorkspaceId) {
    // The folder was deleted (its tree with it) or its move was finished elsewhere: nothing is left to carry.
    await finishRecordedMove(move, folder);
    return 'done';
  }
  const descendants = await descendantFolders(folder);
  const folderChanges = carriedFolders(folder, descendants).slice(0, MOVE_BATCH_ITEMS);
  const foldersCarried = await applyItemChanges(folderChanges);
  let markups: MarkupRecord[] = [];
  let markupsCarried = 0;
  if (folderChanges.length < MOVE_BATCH_ITEMS) {
    markups = await markupsToCarry([folder, ...descendants], move.toWorkspaceId, MOVE_BATCH_ITEMS - folderChanges.length);
    // A retained original goes first: a markup already carried is not found again, its original would be left behind.
    await forEachLimit(
      markups.filter((markup) => markup.hasRetainedOriginal),
      TREE_CONCURRENCY,
      (markup) => moveOriginalToWorkspace(markup.id, move.toWorkspaceId),
    );
    markupsCarried = await applyItemChanges(
      markups.map((markup) => ({ current: markup, next: { ...markup, workspaceId: move.toWorkspaceId } })),
    );
  }
  const found = folderChanges.length + markups.length;
  await recordMoveBatch(folderId, { folders: foldersCarried, markups: markupsCarried, quiet: found === 0 });
  logger.info('move batch', {
    folderId,
    fromWorkspaceId: move.fromWorkspaceId,
    toWorkspaceId: move.toWorkspaceId,
    foldersCarried,
    markupsCarried,
  });
  if (found > 0) return 'continue';
  // Finished only by a quiet batch a full recheck after the first: two copies of the job (a requeue
  // beside the chain) must not finish it together before a straggler had its second to appear.
  if (move.quietSince === undefined || Date.now() - move.quietSince < MOVE_RECHECK_SECONDS * 1000) return 'recheck';
  await finishRecordedMove(move, folder);
  logger.info('move done', {
    folderId,
    carriedFolders: move.carriedFolders,
    carriedMarkups: move.carriedMarkups,
    batches: move.batches + 1,
  });
  return 'done';
}

async function finishRecordedMove(move: MoveRecord, folder: ItemRecord | undefined): Promise<void> {
  await clearMovesOut(move.fromWorkspaceId, move.folderId, move.toWorkspaceId);
  await finishMove(move.folderId);
  if (folder && isRecordedMove(folder)) await clearPendingMove(folder);
}

/** The pending move out of its stored workspace that `item` lies under, if any: the deepest moved folder of its chain. */
async function pendingMoveOver(item: ItemRecord, movesOut: ReadonlyMap<string, string>): Promise<string | undefined> {
  let chain: readonly string[];
  if (item.kind === 'folder') chain = [...item.ancestorIds, item.id];
  else if (item.parentFolderId && movesOut.has(item.parentFolderId)) chain = [item.parentFolderId];
  else {
    const parent = item.parentFolderId ? await getItem(item.parentFolderId, true) : undefined;
    chain = parent?.kind === 'folder' ? [...parent.ancestorIds, parent.id] : [];
  }
  return chain.findLast((id) => movesOut.has(id));
}

/** Carries one item of a recorded move now (a request reached it before the worker); answers it as stored after. */
async function carryNow(item: ItemRecord, movedFolderId: string, toWorkspaceId: string): Promise<ItemRecord | undefined> {
  const moved = await getItem(movedFolderId, true);
  if (moved?.kind === 'folder' && moved.workspaceId === toWorkspaceId && moved.pendingMoveFrom === item.workspaceId) {
    if (item.kind === 'folder') {
      const below = item.ancestorIds.slice(item.ancestorIds.indexOf(movedFolderId) + 1);
      await carryItemRecord(item, { ...item, workspaceId: toWorkspaceId, ancestorIds: [...moved.ancestorIds, moved.id, ...below] });
    } else {
      if (item.hasRetainedOriginal) await moveOriginalToWorkspace(item.id, toWorkspaceId);
      await carryItemRecord(item, { ...item, workspaceId: toWorkspaceId });
    }
    void requeueIfStalled(movedFolderId).catch((error: unknown) =>
      logger.warn('move not queued again', { folderId: movedFolderId, error }),
    );
  }
  return getItem(item.id, true);
}

/**
 * Items as they must be authorized, with their (live) workspaces: each item's workspace is read
 * consistently (once per workspace), and an item lying under a folder moved out of it whose move
 * is not carried yet is carried alone first (one conditional write), so it is answered in, and
 * authorized by, the destination. Items gone meanwhile are left out. `known` holds workspaces the
 * caller already read consistently (not read again).
 */
export async function settleItems<T extends ItemRecord>(
  items: readonly T[],
  known: ReadonlyMap<string, WorkspaceRecord | undefined> = new Map(),
): Promise<{ items: T[]; workspaces: Map<string, WorkspaceRecord | undefined> }> {
  const workspaces = new Map(known);
  const readWorkspaces = async (ids: Iterable<string>) => {
    const missing = [...new Set(ids)].filter((id) => !workspaces.has(id));
    await Promise.all(missing.map(async (id) => workspaces.set(id, await getWorkspace(id, true))));
  };
  await readWorkspaces(items.map((item) => item.workspaceId));
  const settled: (T | undefined)[] = await Promise.all(
    items.map(async (item): Promise<T | undefined> => {
      const movesOut = workspaces.get(item.workspaceId)?.movesOut;
      if (!movesOut?.size) return item;
      const movedFolderId = await pendingMoveOver(item, movesOut);
      if (!movedFolderId) return item;
      return (await carryNow(item, movedFolderId, movesOut.get(movedFolderId)!)) as T | undefined;
    }),
  );
  const present = settled.filter((item): item is T => item !== undefined);
  await readWorkspaces(present.map((item) => item.workspaceId));
  return { items: present, workspaces };
}

/** `settleItems` for one item: undefined when it is gone. */
export async function settleItem<T extends ItemRecord>(
  item: T,
  known?: ReadonlyMap<string, WorkspaceRecord | undefined>,
): Promise<{ item: T; workspace: WorkspaceRecord | undefined } | undefined> {
  const { items, workspaces } = await settleItems([item], known);
  const [settled] = items;
  return settled ? { item: settled, workspace: workspaces.get(settled.workspaceId) } : undefined;
}

/**
 * `items` of `workspace` as its own lists read them (GET /markups, search), without those under a
 * folder moved out of it whose move is still being carried: they answer to the destination only.
 * One consistent BatchGet of their parent folders, and only while the workspace has such a move.
 */
export async function withoutMovedOut<T extends ItemRecord>(
  workspace: Pick<WorkspaceRecord, 'movesOut'>,
  items: readonly T[],
): Promise<T[]> {
  const movesOut = workspace.movesOut;
  if (!movesOut?.size) return [...items];
  const parentIds = [
    ...new Set(items.flatMap((item) => (item.parentFolderId && !movesOut.has(item.parentFolderId) ? [item.parentFolderId] : []))),
  ];
  const parents = new Map((await getItems(parentIds, true)).map((parent) => [parent.id, parent]));
  return items.filter((item) => {
    if (!item.parentFolderId) return true;
    if (movesOut.has(item.parentFolderId)) return false;
    const parent = parents.get(item.parentFolderId);
    return !(parent?.kind === 'folder' && parent.ancestorIds.some((id) => movesOut.has(id)));
  });
}
