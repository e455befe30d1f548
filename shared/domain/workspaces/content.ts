import { deleteWorkspaceInstallations } from '../../db/installations.js';
import { getItem, type FolderRecord } from '../../db/items.js';
import { deleteWorkspaceWebhookRegistrations } from '../../db/webhooks.js';
import { getWorkspace, type WorkspaceRecord } from '../../db/workspaces.js';
import { enqueueConversion } from '../../events/jobs.js';
import { logger } from '../../logger.js';
import { deleteItemRecords } from '../items/deletion.js';
import { descendantFolders, markupsIn } from '../items/tree.js';

/**
 * Queues the removal of what a deleted workspace held. The work is as large as the workspace, so it
 * runs in the conversion worker, not in the request. The workspace is already marked deleted, so a
 * failure to queue cannot be answered by a retry of the request: it is logged with what to re-queue.
 */
export async function deleteWorkspaceContentLater(workspace: WorkspaceRecord): Promise<void> {
  const job = {
    type: 'delete-workspace-content' as const,
    workspaceId: workspace.id,
    folderIds: [workspace.rootFolderId, workspace.archiveFolderId],
  };
  try {
    await enqueueConversion(job);
  } catch (error) {
    logger.error('content of a deleted workspace not queued for deletion', { job, error });
  }
}

/**
 * Removes a deleted workspace's installations with their publicKey claims (so no embedded client
 * can exchange a token for it any more) and its webhook registrations (nothing is delivered for it
 * any more), then its folders (its root and archive) with everything below them: markups first, through `deleteItemRecords`, so their
 * files, conversations and
 * originals go and their bytes leave the organization's counters exactly once; then folders,
 * deepest level first. Running it again finishes what a cut-short run left. A workspace that is
 * not deleted is left alone.
 */
export async function deleteWorkspaceContent(workspaceId: string, folderIds: readonly string[]): Promise<void> {
  if (await getWorkspace(workspaceId)) {
    logger.warn('content deletion of a workspace that is not deleted: skipped', { workspaceId });
    return;
  }
  await deleteWorkspaceInstallations(workspaceId);
  await deleteWorkspaceWebhookRegistrations(workspaceId);
  for (const folderId of folderIds) {
    const folder = await getItem(folderId, true);
    if (folder?.kind !== 'folder' || folder.workspaceId !== workspaceId) continue;
    await deleteFolderTree(folder);
  }
}

async function deleteFolderTree(folder: FolderRecord): Promise<void> {
  const folders = await descendantFolders(folder);
  await deleteItemRecords(await markupsIn([folder, ...folders]));
  const depths = [...new Set(folders.map((candidate) => candidate.ancestorIds.length))].sort((a, b) => b - a);
  for (const depth of depths) await deleteItemRecords(folders.filter((candidate) => candidate.ancestorIds.length === depth));
  await deleteItemRecords([folder]);
}
