import { releaseNamesOf } from '../../db/folder-names.js';
import { itemVersion } from '../../db/items.js';
import { claimItemVersion } from '../../db/item-writes.js';
import { requireVersion, staleVersion, type IfMatch } from '../common/versions.js';
import { deleteItemRecords } from './deletion.js';
import type { ItemAccess } from './access.js';
import { descendantFolders, markupsIn, requireOrdinary } from './tree.js';

/**
 * DELETE /items/:id: a markup, or a folder with everything below it. Markups go first, then
 * subfolders deepest level first, then the folder itself, so a run cut short leaves a smaller
 * but still connected tree that a repeated DELETE finishes: nothing is ever orphaned. The folders'
 * name claims go last. With `ifMatch`, one conditional write at the version read fences the deletion first.
 */
export async function deleteItem(access: ItemAccess, ifMatch?: IfMatch): Promise<void> {
  const { item } = access;
  requireOrdinary(item, 'deleted');
  if (ifMatch) {
    requireVersion(ifMatch, itemVersion(item), `Item ${item.id}`);
    if (!(await claimItemVersion(item.id, itemVersion(item)))) throw staleVersion(`Item ${item.id}`);
  }
  if (item.kind === 'markup') {
    await deleteItemRecords([item]);
    return;
  }
  const folders = await descendantFolders(item);
  await deleteItemRecords(await markupsIn([item, ...folders]));
  const depths = [...new Set(folders.map((folder) => folder.ancestorIds.length))].sort((a, b) => b - a);
  for (const depth of depths) await deleteItemRecords(folders.filter((folder) => folder.ancestorIds.length === depth));
  await deleteItemRecords([item]);
  // Only now: while a folder exists its name stays claimed, so no sibling can take it meanwhile.
  await releaseNamesOf([item, ...folders]);
}
