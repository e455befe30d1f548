import { forEachLimit } from '../../concurrency.js';
import {
  MAX_FOLDER_DEPTH,
  childrenPartition,
  fromItem,
  subfoldersPartition,
  type FolderRecord,
  type ItemRecord,
  type MarkupRecord,
} from '../../db/items.js';
import { queryAll } from '../../db/paging.js';
import { UnprocessableError } from '../../http/errors.js';
import { lowerName } from './names.js';

/** Parallel reads (one Query per folder) one tree operation keeps in flight. */
export const TREE_CONCURRENCY = 16;

/** The direct subfolders of a folder (GSI5: folders only, so markups are never read). */
export async function subfolders(folderId: string): Promise<FolderRecord[]> {
  const found: FolderRecord[] = [];
  for await (const item of queryAll('GSI5', subfoldersPartition(folderId))) found.push(fromItem(item) as FolderRecord);
  return found;
}

/**
 * Every folder below `folder` (not itself), one GSI5 level at a time with the level's queries in
 * parallel; a tree is at most MAX_FOLDER_DEPTH levels, so this is a handful of rounds.
 */
export async function descendantFolders(folder: FolderRecord): Promise<FolderRecord[]> {
  const seen = new Set([folder.id]);
  const found: FolderRecord[] = [];
  let level: FolderRecord[] = [folder];
  while (level.length > 0) {
    const next: FolderRecord[] = [];
    await forEachLimit(level, TREE_CONCURRENCY, async (parent) => {
      for (const child of await subfolders(parent.id)) {
        if (seen.has(child.id)) continue;
        seen.add(child.id);
        next.push(child);
      }
    });
    found.push(...next);
    level = next;
  }
  return found;
}

/** The markups directly inside any of `folders`, read from the children index in parallel. */
export async function markupsIn(folders: readonly FolderRecord[]): Promise<MarkupRecord[]> {
  const found: MarkupRecord[] = [];
  await forEachLimit(folders, TREE_CONCURRENCY, async (folder) => {
    for await (const item of queryAll('GSI1', childrenPartition(folder.id))) {
      const record = fromItem(item);
      if (record.kind === 'markup') found.push(record);
    }
  });
  return found;
}

/** How many folder levels lie below `folder` (0 when it has no subfolders). */
export function subtreeHeight(folder: FolderRecord, descendants: readonly FolderRecord[]): number {
  return descendants.reduce((height, d) => Math.max(height, d.ancestorIds.length - folder.ancestorIds.length), 0);
}

/**
 * A descendant's ancestor ids after the folder above it moved from `moved` to `movedTo`: the part
 * from the root down to the moved folder is replaced, the part below it is kept.
 */
export function rebaseAncestorIds(descendant: FolderRecord, moved: FolderRecord, movedTo: FolderRecord): string[] {
  return [...movedTo.ancestorIds, movedTo.id, ...descendant.ancestorIds.slice(moved.ancestorIds.length + 1)];
}

/** Folder names already used under each folder, loaded once per request and kept current as names are claimed. */
export class SiblingNames {
  private readonly byFolder = new Map<string, Promise<Set<string>>>();

  of(folderId: string): Promise<Set<string>> {
    let names = this.byFolder.get(folderId);
    if (!names) {
      names = subfolders(folderId).then((folders) => new Set(folders.map((f) => lowerName(f.name))));
      this.byFolder.set(folderId, names);
    }
    return names;
  }

  async claim(folderId: string, name: string): Promise<void> {
    (await this.of(folderId)).add(lowerName(name));
  }
}

/** 422 when `what` would put a folder deeper than MAX_FOLDER_DEPTH below the workspace root. */
export function requireDepth(depth: number, what: string): void {
  if (depth > MAX_FOLDER_DEPTH) {
    throw new UnprocessableError(
      `${what} would put a folder ${depth} levels below the workspace root; folders nest at most ${MAX_FOLDER_DEPTH} levels deep.`,
    );
  }
}

/** 422 for the workspace root and archive folders, which no operation may rename, move, archive or delete. */
export function requireOrdinary(item: ItemRecord, action: string): void {
  if (item.kind === 'folder' && item.role !== 'folder') {
    throw new UnprocessableError(`The workspace ${item.role} folder cannot be ${action}.`);
  }
}
