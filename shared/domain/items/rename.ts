import { applyItemChange } from '../../db/item-writes.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import type { ItemAccess } from './access.js';
import { lowerName } from './names.js';
import { requireOrdinary, subfolders } from './tree.js';

/**
 * PATCH /items/:id: renames a folder or markup (index keys follow through `toItem`). A folder may
 * not take a sibling folder's name: that is a 409, since the caller asked for that exact name.
 */
export async function renameItem(access: ItemAccess, name: string): Promise<void> {
  const { item } = access;
  requireOrdinary(item, 'renamed');
  if (item.kind === 'folder' && item.parentFolderId && lowerName(name) !== lowerName(item.name)) {
    const siblings = await subfolders(item.parentFolderId);
    if (siblings.some((sibling) => sibling.id !== item.id && lowerName(sibling.name) === lowerName(name))) {
      throw new ConflictError(`A folder named "${name}" already exists in this folder.`);
    }
  }
  const now = Date.now();
  if (!(await applyItemChange(item, { ...item, name, modifiedAt: now, activityAt: now }))) {
    throw new NotFoundError(`Item ${item.id} does not exist.`);
  }
}
