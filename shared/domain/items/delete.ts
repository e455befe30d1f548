import { releaseNamesOf } from '../../db/folder-names.js';
import { itemVersion } from '../../db/items.js';
import { claimItemVersion } from '../../db/item-writes.js';
import { requireVersion, staleVersion, type IfMatch } from '../common/versions.js';
import { deleteItemRecords } from './deletion.js';
import type { ItemAccess } from './access.js';
import { markupsStillIn, markSubtreeDeleting, requireOrdinary } from './tree.js';

/**
 * DELETE /items/:id: a markup, or a folder with everything below it. The folder and then each level
 * of subfolders below it are first marked as being deleted (`markSubtreeDeleting`): from then on no
 * create or move puts anything into the subtree or takes anything out of it (409, 404), so what
 * the deletion reads is what it deletes, and nothing moved out meanwhile is deleted with it.
 * Markups go first, then subfolders deepest level first, then the folder itself, so a run cut
 * short leaves a smaller but still connected tree, still marked, that a repeated DELETE finishes:
 * nothing is ever orphaned. The folders' name claims go last. With `ifMatch`, one conditional write
 * at the version read fences the deletion first.
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
  const folders = await markSubtreeDeleting(item);
  await deleteItemRecords(await markupsStillIn([item, ...folders]));
  const depths = [...new Set(folders.map((folder) => folder.ancestorIds.length))].sort((a, b) => b - a);
  for (const depth of depths) await deleteItemRecords(folders.filter((folder) => folder.ancestorIds.length === depth));
  await deleteItemRecords([item]);
  // Only now: while a folder exists its name stays claimed, so no sibling can take it meanwhile.
  await releaseNamesOf([item, ...folders]);
}
