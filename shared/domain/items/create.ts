import { randomUUID } from 'node:crypto';
import { newFolderRecord, type FolderRecord } from '../../db/items.js';
import { insertFolderRecord } from '../../db/item-writes.js';
import { NotFoundError } from '../../http/errors.js';
import type { ItemAccess } from './access.js';
import { chooseFolderName } from './names.js';
import { requireDepth, SiblingNames } from './tree.js';
import { toFolderItem, type FolderItem } from './views.js';

/** Creates a folder named exactly `name` under `parent` and marks activity on the parent, in one transaction. */
export async function insertFolder(parent: FolderRecord, name: string, at = Date.now()): Promise<FolderRecord> {
  requireDepth(parent.ancestorIds.length + 1, 'Creating this folder');
  const record = newFolderRecord({ id: randomUUID(), workspaceId: parent.workspaceId, organizationId: parent.organizationId, name, parent, at });
  if (!(await insertFolderRecord(record, parent, at))) throw new NotFoundError(`Folder ${parent.id} does not exist.`);
  return record;
}

/**
 * POST /items: a folder under the parent. A sibling folder with the same name (case-insensitive)
 * makes it take `fallbackName`, else a numbered name (Move rule 4 applied to creation).
 */
export async function createFolder(parent: ItemAccess<FolderRecord>, input: { name: string; fallbackName?: string }): Promise<FolderItem> {
  const name = chooseFolderName(input.name, input.fallbackName, await new SiblingNames().of(parent.item.id));
  return toFolderItem(await insertFolder(parent.item, name), parent.role);
}
