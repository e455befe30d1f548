import { allows } from '../../auth/permissions.js';
import type { ItemRecord } from '../../db/items.js';
import type { Role } from '../../db/users.js';

export type ItemType = 'folder' | 'markup';

/** The folder-item shape of the spec ("A moved item is returned as"), plus `type`. */
export interface FolderItem {
  id: string;
  type: ItemType;
  createdAt: number;
  modifiedAt: number;
  deletedAt: null;
  scopes: string[];
  assignedRoleSlugs: string[];
  name: string;
  parentFolderId: string | null;
  workspaceId: string;
}

/** What the caller's role lets it do to items, read from the permission table (`item:update`, `item:delete`). */
export function folderItemScopes(role: Role): string[] {
  const scopes = ['folderItem:view'];
  if (allows(role, 'item:update')) scopes.push('folderItem:edit');
  if (allows(role, 'item:delete')) scopes.push('folderItem:delete');
  return scopes;
}

/**
 * The one view of a folder or markup as a folder item. Listings show folders and markups side by
 * side, so `type` is always present; times are millisecond numbers (spec Conventions 4). Items carry
 * no per-item role assignments, so `assignedRoleSlugs` is empty.
 */
export function toFolderItem(record: ItemRecord, role: Role): FolderItem {
  return {
    id: record.id,
    type: record.kind,
    createdAt: record.createdAt,
    modifiedAt: record.modifiedAt,
    deletedAt: null,
    scopes: folderItemScopes(role),
    assignedRoleSlugs: [],
    name: record.name,
    parentFolderId: record.parentFolderId,
    workspaceId: record.workspaceId,
  };
}
