/**
 * Folder items. Every workspace has a root folder (default parent of new markups) and an archive
 * folder; the items route group builds the rest of the folder tree on these records.
 */
export type FolderRole = 'root' | 'archive' | 'folder';

export interface Folder {
  id: string;
  workspaceId: string;
  name: string;
  parentFolderId: string | null;
  role: FolderRole;
  /** Millisecond numbers: folder items use them (spec: Conventions 4). */
  createdAt: number;
  modifiedAt: number;
}

export const folderKey = (folderId: string) => ({ PK: `ITEM#${folderId}`, SK: 'ITEM' });

export function toFolderItem(folder: Folder): Record<string, unknown> {
  return { ...folderKey(folder.id), entity: 'Folder', ...folder };
}
