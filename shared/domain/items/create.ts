import { randomUUID } from 'node:crypto';
import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import { clearStaleClaim } from '../../db/folder-names.js';
import { newFolderRecord, type FolderRecord } from '../../db/items.js';
import { insertFolderRecord } from '../../db/item-writes.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { ItemAccess } from './access.js';
import { chooseFolderName, lowerName } from './names.js';
import { requireDepth, SiblingNames } from './tree.js';
import { toFolderItem, type FolderItem } from './views.js';

/** Folders nest at most this many levels below the workspace root (the root is level 0): deeper is a 422. */
export { MAX_FOLDER_DEPTH } from '../../db/items.js';

/**
 * Names one creation tries before a 409: each lost claim means another request took that name at
 * the same moment, so ten parallel creations of one name need at most ten.
 */
const NAME_ATTEMPTS = 25;

/**
 * Creates a folder under `parent` and marks activity on the parent, in one transaction that also
 * claims its name (`insertFolderRecord`). `choose` picks the name from the names taken, which grow
 * by every name this request lost to a concurrent one; it answers undefined to give up (the
 * folder is then not created and undefined answered). 404 when the parent is gone.
 */
export async function insertFolder(
  parent: FolderRecord,
  taken: ReadonlySet<string>,
  choose: (taken: ReadonlySet<string>) => string | undefined,
  at = Date.now(),
): Promise<FolderRecord | undefined> {
  requireDepth(parent.ancestorIds.length + 1, 'Creating this folder');
  const lost = new Set(taken);
  return withBackoff(
    async () => {
      const name = choose(lost);
      if (name === undefined) return undefined;
      const record = newFolderRecord({
        id: randomUUID(),
        workspaceId: parent.workspaceId,
        organizationId: parent.organizationId,
        name,
        parent,
        at,
      });
      const outcome = await insertFolderRecord(record, parent, at);
      if (outcome === 'parent-gone') throw new NotFoundError(`Folder ${parent.id} does not exist.`);
      if (outcome === 'created') return record;
      if (!(await clearStaleClaim(parent.id, name))) lost.add(lowerName(name));
      return AGAIN;
    },
    {
      attempts: NAME_ATTEMPTS,
      baseMs: 0,
      exhausted: () => new ConflictError(`Too many folders are being created in folder ${parent.id} at once; try again.`),
    },
  );
}

/**
 * POST /items: a folder under the parent. A sibling folder with the same name (case-insensitive)
 * makes it take `fallbackName`, else a numbered name (Move rule 4 applied to creation); names are
 * claimed in the creating transaction, so parallel creations of one name get distinct names.
 */
export async function createFolder(parent: ItemAccess<FolderRecord>, input: { name: string; fallbackName?: string }): Promise<FolderItem> {
  const taken = await new SiblingNames().of(parent.item.id);
  const created = await insertFolder(parent.item, taken, (lost) => chooseFolderName(input.name, input.fallbackName, lost));
  return toFolderItem(created!, parent.role);
}
