import { forEachLimit } from '../../concurrency.js';
import { getItem, getItems, type FolderRecord, type ItemRecord } from '../../db/items.js';
import { applyItemChanges, clearPendingMove } from '../../db/item-writes.js';
import { moveOriginalToWorkspace } from '../../db/originals.js';
import { descendantFolders, markupsIn, TREE_CONCURRENCY } from './tree.js';

/**
 * A move commits the moved item alone, marked `pendingMoveFrom`; what it carries (the folders
 * below with their `ancestorIds` and workspace, the markups below, retained originals) follows
 * after. Every step here is computed from the stored state and writes only differences, so running
 * it again, after a failure or in two requests at once, finishes the same move and harms nothing.
 */

/** The subtree below a moved folder made to agree with it: ancestor ids and workspace, top down. */
async function carrySubtree(folder: FolderRecord): Promise<void> {
  const workspaceId = folder.workspaceId;
  const descendants = await descendantFolders(folder);
  // descendantFolders answers level by level, so a parent's ancestor ids are known before its children's.
  const ancestorIds = new Map<string, string[]>([[folder.id, folder.ancestorIds]]);
  const changes = descendants.map((current) => {
    const parentId = current.parentFolderId!;
    const next = { ...current, workspaceId, ancestorIds: [...ancestorIds.get(parentId)!, parentId] };
    ancestorIds.set(current.id, next.ancestorIds);
    return { current, next };
  });
  await applyItemChanges(changes);
  if (folder.pendingMoveFrom === workspaceId) return;
  const markups = await markupsIn([folder, ...descendants]);
  await applyItemChanges(markups.filter((markup) => markup.workspaceId !== workspaceId).map((markup) => ({ current: markup, next: { ...markup, workspaceId } })));
  // A retained original belongs to its markup's workspace; an earlier run may have moved the markup and not yet its original.
  await forEachLimit(
    markups.filter((markup) => markup.hasRetainedOriginal),
    TREE_CONCURRENCY,
    (markup) => moveOriginalToWorkspace(markup.id, workspaceId),
  );
}

/**
 * Finishes the pending move of `item`, if any, and answers the item as now stored (undefined when
 * it is gone). Idempotent: see above.
 */
export async function finishPendingMove(item: Pick<ItemRecord, 'id'>): Promise<ItemRecord | undefined> {
  const current = await getItem(item.id, true);
  if (!current?.pendingMoveFrom) return current;
  if (current.kind === 'folder') await carrySubtree(current);
  else if (current.hasRetainedOriginal && current.pendingMoveFrom !== current.workspaceId) await moveOriginalToWorkspace(current.id, current.workspaceId);
  await clearPendingMove(current);
  return getItem(item.id, true);
}

/**
 * Finishes every pending move that `item` is part of: its own and those of the folders above it
 * (for a folder, its `ancestorIds`; one BatchGet). True when there was one, so the caller reads again.
 */
export async function finishMovesAround(item: ItemRecord): Promise<boolean> {
  const above = item.kind === 'folder' ? await getItems(item.ancestorIds, true) : [];
  const pending = [...above, item].filter((candidate) => candidate.pendingMoveFrom);
  for (const folder of pending) await finishPendingMove(folder);
  return pending.length > 0;
}
