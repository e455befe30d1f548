import { allows, type AnyRole } from '../../auth/permissions.js';
import type { FolderCounts } from '../../db/folder-counts.js';
import type { ItemRecord } from '../../db/items.js';
import type { ChildFolderView, ChildMarkupView, FolderItemView } from '../../schemas/items.js';
import { markupUrlOf, type MarkupCardFields } from '../markups/view.js';

/** The folder-item shape of the spec ("A moved item is returned as"), plus `type`: the answer schema's type. */
export type FolderItem = FolderItemView;

/** What the caller's role lets it do to items, read from the permission table (`item:update`, `item:delete`). */
export function folderItemScopes(role: AnyRole): string[] {
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
export function toFolderItem(record: ItemRecord, role: AnyRole): FolderItem {
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

/** A folder just created holds nothing. */
export const EMPTY_FOLDER_COUNTS: FolderCounts = { folderCount: 0, projectCount: 0 };

/** What a child listing adds to a markup: its card, and how many of its threads the caller has not read. */
export type ChildMarkupCard = MarkupCardFields & Pick<ChildMarkupView, 'unreadThreads'>;

/**
 * One child of a folder as the live service lists it (DESIGN.md, "Operations listed as 204"): a
 * folder with what it holds (`ChildFolderSchema`); a markup with `markupUrl`, `url` when it is a
 * webpage markup, and the extension fields its card needs (`markupCardFields`, the caller's
 * `unreadThreads`), so a listing needs no GET /markups/{id} per markup (`ChildMarkupSchema`);
 * existing clients tell markups from folders by `url`/`markupUrl`, so a folder never carries
 * either and a markup always carries `markupUrl`. A folder needs its `counts` (what it holds), a
 * markup its `card`.
 */
export function toChildItem(
  record: ItemRecord,
  role: AnyRole,
  appUrl: string,
  counts: FolderCounts | undefined,
  card?: ChildMarkupCard,
): ChildFolderView | ChildMarkupView {
  const item = toFolderItem(record, role);
  if (record.kind === 'folder') {
    if (!counts) throw new Error(`folder ${record.id} listed without its counts`);
    return { ...item, type: 'folder', folderCount: counts.folderCount, projectCount: counts.projectCount };
  }
  if (!card) throw new Error(`markup ${record.id} listed without its card`);
  return {
    ...item,
    type: 'markup',
    markupUrl: markupUrlOf(appUrl, record.id),
    ...(record.type === 'webpage' && record.url !== undefined ? { url: record.url } : {}),
    ...card,
  };
}
