import { authorize, requireInScope } from '../../auth/authorize.js';
import type { Permission } from '../../auth/permissions.js';
import type { Principal } from '../../auth/principal.js';
import { getItem, getItems, type FolderRecord, type ItemRecord } from '../../db/items.js';
import type { AnyRole } from '../../auth/permissions.js';
import type { WorkspaceRecord } from '../../db/workspaces.js';
import { NotFoundError } from '../../errors.js';
import { settleItem, settleItems } from './pending-moves.js';

/** An item the caller may reach, with its (live) workspace and the caller's role there. */
export interface ItemAccess<T extends ItemRecord = ItemRecord> {
  item: T;
  workspace: WorkspaceRecord;
  role: AnyRole;
}

const workspaceRefOf = (item: ItemRecord) => ({ id: item.workspaceId, organizationId: item.organizationId });

/**
 * The access of an item already read, authorized for the route's permission: 403 outside the key's
 * scope or below the permission's role, 404 when its workspace is deleted (or the item is gone). An
 * item under a folder moved into another workspace is answered, and authorized, as in the
 * destination (`settleItem`), however far its move's worker has come.
 */
export async function accessTo<T extends ItemRecord>(principal: Principal, item: T, permission?: Permission): Promise<ItemAccess<T>> {
  // Moves stay inside an organization: another organization's item is refused before anything else.
  if (item.organizationId !== principal.organizationId) requireInScope(principal, workspaceRefOf(item), `Item ${item.id}`);
  const settled = await settleItem(item);
  if (!settled) throw new NotFoundError(`Item ${item.id} does not exist.`);
  requireInScope(principal, workspaceRefOf(settled.item), `Item ${item.id}`);
  const role = await authorize(principal, workspaceRefOf(settled.item), { permission });
  if (!settled.workspace) throw new NotFoundError(`Item ${item.id} does not exist.`);
  return { item: settled.item, workspace: settled.workspace, role };
}

/**
 * The item a request names: 404 when unknown (or its workspace is deleted), 403 when outside the
 * key's scope or below the route's permission. Writes read consistently so they decide on the latest state.
 */
export async function loadItemForCaller(principal: Principal, itemId: string, options: { consistent?: boolean } = {}): Promise<ItemAccess> {
  const item = await getItem(itemId, options.consistent ?? false);
  if (!item) throw new NotFoundError(`Item ${itemId} does not exist.`);
  return accessTo(principal, item);
}

/** Like `loadItemForCaller`, for ids that must name a folder (a markup id is a 404 here); `permission` is checked beside the route's. */
export async function loadFolderForCaller(
  principal: Principal,
  folderId: string,
  options: { consistent?: boolean; permission?: Permission } = {},
): Promise<ItemAccess<FolderRecord>> {
  const item = await getItem(folderId, options.consistent ?? false);
  if (!item || item.kind !== 'folder') throw new NotFoundError(`Folder ${folderId} does not exist.`);
  return accessTo(principal, item, options.permission);
}

/**
 * Every listed item, all or nothing: unknown ids make the whole request a 404 naming them, an item
 * outside the key's scope a 403, and a role below the route's permission in any workspace a 403.
 */
export async function loadItemsForCaller(principal: Principal, itemIds: readonly string[]): Promise<ItemAccess[]> {
  const ids = [...new Set(itemIds)];
  const found = new Map((await getItems(ids)).map((item) => [item.id, item]));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) throw new NotFoundError(`These items do not exist: ${missing.join(', ')}. Nothing was changed.`);
  for (const item of found.values())
    if (item.organizationId !== principal.organizationId) requireInScope(principal, workspaceRefOf(item), `Item ${item.id}`);
  // Items under a folder moved into another workspace count as in the destination (`settleItems`).
  const settled = await settleItems(ids.map((id) => found.get(id)!));
  const gone = ids.filter((id) => !settled.items.some((item) => item.id === id));
  if (gone.length > 0) throw new NotFoundError(`These items do not exist: ${gone.join(', ')}. Nothing was changed.`);
  const items = settled.items;
  for (const item of items) requireInScope(principal, workspaceRefOf(item), `Item ${item.id}`);
  const byWorkspace = new Map(items.map((item) => [item.workspaceId, item]));
  const contexts = new Map(
    await Promise.all(
      [...byWorkspace.values()].map(async (item) => {
        const role = await authorize(principal, workspaceRefOf(item));
        return [item.workspaceId, { workspace: settled.workspaces.get(item.workspaceId), role }] as const;
      }),
    ),
  );
  return items.map((item) => {
    const context = contexts.get(item.workspaceId)!;
    if (!context.workspace) throw new NotFoundError(`Item ${item.id} does not exist. Nothing was changed.`);
    return { item, workspace: context.workspace, role: context.role };
  });
}
