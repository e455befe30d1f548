import type { FolderRecord } from '../../db/items.js';
import { applyItemChange } from '../../db/item-writes.js';
import { bestEffort } from '../../db/core/transact.js';
import { touchWorkspaceActivity } from '../../db/workspaces.js';

/** Moves a folder's `activityAt` forward (never back) with its activity index key. */
export async function touchFolderActivity(folder: FolderRecord, at: number): Promise<void> {
  if (folder.activityAt >= at) return;
  // A lost race (the folder changed since it was read) leaves the newer activity in place.
  await applyItemChange(folder, { ...folder, activityAt: at }, { unchangedSinceRead: true });
}

/** After a creation or move: the folders that received markups and the workspace show activity. */
export async function recordActivity(workspaceId: string, folders: readonly FolderRecord[], at: number): Promise<void> {
  await Promise.all([
    ...folders.map((folder) => bestEffort('folder activity', () => touchFolderActivity(folder, at))),
    bestEffort('workspace activity', () => touchWorkspaceActivity(workspaceId, new Date(at).toISOString())),
  ]);
}
