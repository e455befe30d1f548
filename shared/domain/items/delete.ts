import { releaseNamesOf } from '../../db/folder-names.js';
import { deleteItemRecords } from '../deletion.js';
import type { ItemAccess } from './access.js';
import { descendantFolders, markupsIn, requireOrdinary } from './tree.js';

/**
 * DELETE /items/:id: a markup, or a folder with everything below it. Markups go first, then
 * subfolders deepest level first, then the folder itself, so a run cut short leaves a smaller
 * but still connected tree that a repeated DELETE finishes: nothing is ever orphaned. The folders'
 * name claims go last.
 */
export async function deleteItem(access: ItemAccess): Promise<void> {
  const { item } = access;
  requireOrdinary(item, 'deleted');
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
