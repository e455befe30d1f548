import { clearStaleClaim } from '../../db/folder-names.js';
import { itemVersion } from '../../db/items.js';
import { applyItemChange, renameFolderRecord } from '../../db/item-writes.js';
import { versionCondition } from '../../db/core/table.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { requireVersion, staleVersion, type IfMatch } from '../common/versions.js';
import type { ItemAccess } from './access.js';
import { lowerName } from './names.js';
import { requireOrdinary, subfolders } from './tree.js';

/**
 * PATCH /items/:id: renames a folder or markup (index keys follow through `toItem`). A folder may
 * not take a sibling folder's name: that is a 409, since the caller asked for that exact name. The
 * folder's name claim changes in the renaming transaction, so two renames to one name cannot both win.
 * With `ifMatch`, the write holds only at the version read (else 412).
 */
export async function renameItem(access: ItemAccess, name: string, ifMatch?: IfMatch): Promise<void> {
  const { item } = access;
  requireOrdinary(item, 'renamed');
  const subject = `Item ${item.id}`;
  requireVersion(ifMatch, itemVersion(item), subject);
  const expectedVersion = ifMatch ? itemVersion(item) : undefined;
  const now = Date.now();
  if (item.kind === 'markup' || !item.parentFolderId) {
    const when = expectedVersion === undefined ? undefined : versionCondition(expectedVersion);
    if (!(await applyItemChange(item, { ...item, name, modifiedAt: now, activityAt: now }, { when })))
      throw ifMatch ? staleVersion(subject) : new NotFoundError(`${subject} does not exist.`);
    return;
  }
  const clash = () => new ConflictError(`A folder named "${name}" already exists in this folder.`);
  if (lowerName(name) !== lowerName(item.name)) {
    // Folders made before name claims existed hold none: their names are found by reading the siblings.
    const siblings = await subfolders(item.parentFolderId);
    if (siblings.some((sibling) => sibling.id !== item.id && lowerName(sibling.name) === lowerName(name))) throw clash();
  }
  let outcome = await renameFolderRecord(item, { ...item, name, modifiedAt: now, activityAt: now }, { expectedVersion });
  if (outcome === 'name-taken' && (await clearStaleClaim(item.parentFolderId, name))) {
    outcome = await renameFolderRecord(item, { ...item, name, modifiedAt: now, activityAt: now }, { expectedVersion });
  }
  if (outcome === 'changed' && ifMatch) throw staleVersion(subject);
  if (outcome === 'changed')
    throw new ConflictError(`Folder ${item.id} was renamed, moved or deleted by another request; read it again and retry.`);
  if (outcome === 'name-taken') throw clash();
}
