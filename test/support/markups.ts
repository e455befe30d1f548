import { randomUUID } from 'node:crypto';
import { getItem, newFolderRecord, toItem, type FolderRecord, type MarkupRecord } from '../../shared/db/items.js';
import { batchPut, putNew, transact } from '../../shared/db/core/transact.js';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { newWebpageMarkupRecord } from '../../shared/domain/markups/create.js';
import { localStack } from './api.js';

export interface WorkspaceRef {
  workspaceId: string;
}

async function folderOf(workspaceId: string, folderId?: string): Promise<FolderRecord> {
  localStack();
  const workspace = await getWorkspace(workspaceId);
  if (!workspace) throw new Error(`no workspace ${workspaceId}`);
  const folder = await getItem(folderId ?? workspace.rootFolderId);
  if (!folder || folder.kind !== 'folder') throw new Error(`no folder ${folderId}`);
  return folder;
}

/** A folder written straight to the table, as the items routes would create it. */
export async function makeFolder(ref: WorkspaceRef, options: { name?: string; parentFolderId?: string } = {}): Promise<FolderRecord> {
  const parent = await folderOf(ref.workspaceId, options.parentFolderId);
  const record = newFolderRecord({
    id: randomUUID(),
    workspaceId: parent.workspaceId,
    organizationId: parent.organizationId,
    name: options.name ?? `Folder ${randomUUID().slice(0, 6)}`,
    parent,
  });
  await transact([putNew(toItem(record))]);
  return record;
}

/**
 * `count` webpage markups written straight to the table (no usage charge), one second apart in
 * creation time (the last one newest), for list and search tests that need many markups fast.
 */
export async function makeMarkups(
  ref: WorkspaceRef,
  count: number,
  options: { parentFolderId?: string; name?: (index: number) => string; url?: (index: number) => string; startAt?: number } = {},
): Promise<MarkupRecord[]> {
  const parent = await folderOf(ref.workspaceId, options.parentFolderId);
  const workspace = (await getWorkspace(ref.workspaceId))!;
  const startAt = options.startAt ?? Date.now() - count * 1000;
  const records = Array.from({ length: count }, (_, index) =>
    newWebpageMarkupRecord({
      placement: { workspace, parent },
      url: options.url?.(index) ?? `https://example.com/page-${index}`,
      name: options.name?.(index) ?? `Page ${index}`,
      createdBy: randomUUID(),
      at: startAt + index * 1000,
    }),
  );
  await batchPut(records.map(toItem));
  return records;
}
