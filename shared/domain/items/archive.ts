import { getItems, type FolderRecord, type ItemRecord } from '../../db/items.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { ItemAccess } from './access.js';
import { insertFolder } from './create.js';
import { moveLoaded } from './move.js';
import { lowerName } from './names.js';
import { descendantFolders, requireDepth, requireOrdinary, SiblingNames, subfolders, subtreeHeight } from './tree.js';

/** Ancestor folder ids of an item, root (or archive) first. */
function chainOf(item: ItemRecord, parents: ReadonlyMap<string, FolderRecord>): string[] {
  if (item.kind === 'folder') return item.ancestorIds;
  const parent = item.parentFolderId ? parents.get(item.parentFolderId) : undefined;
  return parent ? [...parent.ancestorIds, parent.id] : [];
}

/** Folders named `names` from `base` down, reusing a subfolder of the same name (case-insensitive) or creating it. */
async function ensurePath(
  base: FolderRecord,
  names: readonly string[],
  made: Map<string, FolderRecord>,
  siblings: SiblingNames,
): Promise<FolderRecord> {
  let current = base;
  for (const name of names) {
    const key = `${current.id}\u0001${lowerName(name)}`;
    let next = made.get(key);
    if (!next) {
      next = await subfolderNamed(current, name);
      await siblings.claim(current.id, next.name);
      made.set(key, next);
    }
    current = next;
  }
  return current;
}

/** The subfolder of `parent` named `name` (case-insensitive), created when there is none; a concurrent creation of it is reused. */
async function subfolderNamed(parent: FolderRecord, name: string): Promise<FolderRecord> {
  const existing = async () => (await subfolders(parent.id)).find((folder) => lowerName(folder.name) === lowerName(name));
  for (let attempt = 0; attempt < PATH_ATTEMPTS; attempt += 1) {
    const found = await existing();
    if (found) return found;
    // Exactly this name or none: a lost claim means another request just created it.
    const created = await insertFolder(parent, new Set(), (taken) => (taken.has(lowerName(name)) ? undefined : name));
    if (created) return created;
  }
  throw new ConflictError(`Folder "${name}" in folder ${parent.id} is being created and deleted by other requests; try again.`);
}

/** Reads of a path folder a concurrent creation may need before its index shows it. */
const PATH_ATTEMPTS = 5;

interface Relocation {
  item: ItemRecord;
  base: FolderRecord;
  path: string[];
  descendants: FolderRecord[];
}

/**
 * PATCH /items/archive and /items/restore. Everything is checked before anything moves: unknown
 * ids and scope were settled by `loadItemsForCaller`; here the root and archive folders are refused
 * (422) and each tree must fit MAX_FOLDER_DEPTH where it goes (422). Items already where the
 * operation would put them (archived ones on archive, live ones on restore) and items that travel
 * with a listed ancestor are left alone. Archive always remembers the folder path the item came
 * from (`archivedFromPath`); `withPath` re-creates that path under the archive folder (archive) or
 * under the root (restore), reusing folders with the same names.
 */
export async function relocateItems(accesses: readonly ItemAccess[], direction: 'archive' | 'restore', withPath: boolean): Promise<void> {
  for (const { item } of accesses) requireOrdinary(item, direction === 'archive' ? 'archived' : 'restored');
  const markupParents = accesses.flatMap(({ item }) => (item.kind === 'markup' && item.parentFolderId ? [item.parentFolderId] : []));
  const parents = new Map(
    (await getItems(markupParents)).filter((item): item is FolderRecord => item.kind === 'folder').map((folder) => [folder.id, folder]),
  );
  const listed = new Set(accesses.map(({ item }) => item.id));
  const chosen = accesses.filter(({ item, workspace }) => {
    const chain = chainOf(item, parents);
    const archived = chain[0] === workspace.archiveFolderId;
    const carried = chain.some((id) => listed.has(id));
    return !carried && (direction === 'archive' ? !archived : archived);
  });
  const workspaceFolders = new Map(
    (await getItems(chosen.flatMap(({ workspace }) => [workspace.rootFolderId, workspace.archiveFolderId]))).map((folder) => [
      folder.id,
      folder,
    ]),
  );
  const pathIds = direction === 'archive' ? chosen.flatMap(({ item }) => chainOf(item, parents).slice(1)) : [];
  const pathNames = new Map((await getItems(pathIds)).map((folder) => [folder.id, folder.name]));

  const plan: Relocation[] = [];
  for (const { item, workspace } of chosen) {
    const baseId = direction === 'archive' ? workspace.archiveFolderId : workspace.rootFolderId;
    const base = workspaceFolders.get(baseId);
    if (!base || base.kind !== 'folder')
      throw new NotFoundError(`The ${direction === 'archive' ? 'archive' : 'root'} folder of workspace ${workspace.id} is missing.`);
    const path =
      direction === 'archive'
        ? chainOf(item, parents)
            .slice(1)
            .flatMap((id) => pathNames.get(id) ?? [])
        : [...(item.archivedFromPath ?? [])];
    const descendants = item.kind === 'folder' ? await descendantFolders(item) : [];
    if (item.kind === 'folder') {
      const depth = (withPath ? path.length : 0) + 1 + subtreeHeight(item, descendants);
      requireDepth(depth, `${direction === 'archive' ? 'Archiving' : 'Restoring'} folder ${item.id}`);
    }
    plan.push({ item, base, path, descendants });
  }

  const made = new Map<string, FolderRecord>();
  const names = new SiblingNames();
  for (const { item, base, path, descendants } of plan) {
    const destination = withPath ? await ensurePath(base, path, made, names) : base;
    await moveLoaded(item, destination, { archivedFromPath: direction === 'archive' ? path : null, names, descendants });
  }
}
