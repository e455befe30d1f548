import { clearStaleClaim } from '../../db/folder-names.js';
import { applyItemChange, renameFolderRecord } from '../../db/item-writes.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import type { ItemAccess } from './access.js';
import { lowerName } from './names.js';
import { requireOrdinary, subfolders } from './tree.js';

/**
 * PATCH /items/:id: renames a folder or markup (index keys follow through `toItem`). A folder may
 * not take a sibling folder's name: that is a 409, since the caller asked for that exact name. The
 * folder's name claim changes in the renaming transaction, so two renames to one name cannot both win.
 */
export async function renameItem(access: ItemAccess, name: string): Promise<void> {
  const { item } = access;
  requireOrdinary(item, 'renamed');
  const now = Date.now();
  if (item.kind === 'markup' || !item.parentFolderId) {
    if (!(await applyItemChange(item, { ...item, name, modifiedAt: now, activityAt: now }))) throw new NotFoundError(`Item ${item.id} does not exist.`);
    return;
  }
  const clash = () => new ConflictError(`A folder named "${name}" already exists in this folder.`);
  if (lowerName(name) !== lowerName(item.name)) {
    // Folders made before name claims existed hold none: their names are found by reading the siblings.
    const siblings = await subfolders(item.parentFolderId);
    if (siblings.some((sibling) => sibling.id !== item.id && lowerName(sibling.name) === lowerName(name))) throw clash();
  }
  let outcome = await renameFolderRecord(item, { ...item, name, modifiedAt: now, activityAt: now });
  if (outcome === 'name-taken' && (await clearStaleClaim(item.parentFolderId, name))) {
    outcome = await renameFolderRecord(item, { ...item, name, modifiedAt: now, activityAt: now });
  }
  if (outcome === 'changed') throw new ConflictError(`Folder ${item.id} was renamed, moved or deleted by another request; read it again and retry.`);
  if (outcome === 'name-taken') throw clash();
}
