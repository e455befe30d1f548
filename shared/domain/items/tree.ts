import { forEachLimit } from '../../concurrency.js';
import {
  MAX_FOLDER_DEPTH,
  childrenPartition,
  fromItem,
  getItem,
  getItems,
  subfoldersPartition,
  type FolderRecord,
  type ItemRecord,
  type MarkupRecord,
} from '../../db/items.js';
import { queryAll } from '../../db/core/paging.js';
import { markFolderDeleting } from '../../db/item-writes.js';
import { ConflictError, UnprocessableError } from '../../errors.js';
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
 * parallel; a tree is at most MAX_FOLDER_DEPTH levels, so this is a handful of rounds. `admit`, when
 * given, decides for each listed folder (in parallel) whether it counts and its level is read next.
 */
export async function descendantFolders(folder: FolderRecord, admit?: (child: FolderRecord) => Promise<boolean>): Promise<FolderRecord[]> {
  const seen = new Set([folder.id]);
  const found: FolderRecord[] = [];
  let level: FolderRecord[] = [folder];
  while (level.length > 0) {
    const listed: FolderRecord[] = [];
    await forEachLimit(level, TREE_CONCURRENCY, async (parent) => {
      for (const child of await subfolders(parent.id)) {
        if (seen.has(child.id)) continue;
        seen.add(child.id);
        listed.push(child);
      }
    });
    const next: FolderRecord[] = [];
    if (!admit) next.push(...listed);
    else
      await forEachLimit(listed, TREE_CONCURRENCY, async (child) => {
        if (await admit(child)) next.push(child);
      });
    found.push(...next);
    level = next;
  }
  return found;
}

/**
 * Marks `folder` and every folder below it as being deleted (`markFolderDeleting`), one level at a
 * time, each level read only after the level above is marked: a marked folder takes no new
 * subfolder and lets none out, so the levels read are the whole subtree and stay so. Answers the
 * folders below `folder` (empty when `folder` itself is gone: a concurrent deletion took it).
 */
export async function markSubtreeDeleting(folder: FolderRecord, at = Date.now()): Promise<FolderRecord[]> {
  if (!(await markFolderDeleting(folder.id, at))) return [];
  // Marked only while still under the folder it was listed under: the index may still list one that moved out.
  return descendantFolders(folder, (child) => markFolderDeleting(child.id, at, child.parentFolderId ?? undefined));
}

/**
 * The markups inside `folders` (a subtree marked by `markSubtreeDeleting`), read from the children
 * index and then again, consistently, by key: only those still in one of the folders are answered,
 * so one the index still lists where it was before a move is left alone.
 */
export async function markupsStillIn(folders: readonly FolderRecord[]): Promise<MarkupRecord[]> {
  const inside = new Set(folders.map((folder) => folder.id));
  const ids = [...new Set((await markupsIn(folders)).map((markup) => markup.id))];
  const found: MarkupRecord[] = [];
  for (let i = 0; i < ids.length; i += 100) {
    for (const item of await getItems(ids.slice(i, i + 100), true)) {
      if (item.kind === 'markup' && item.parentFolderId && inside.has(item.parentFolderId)) found.push(item);
    }
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

/** A folder with the folders above it, root first, as its parent links say (not its `ancestorIds`). */
export interface Ancestry {
  folder: FolderRecord;
  ancestors: FolderRecord[];
}

/** True when `ancestors` is exactly the chain of parent links from the root down to `folder`. */
function linked(folder: FolderRecord, ancestors: readonly (FolderRecord | undefined)[]): ancestors is FolderRecord[] {
  const chain = [...ancestors, folder];
  return chain.every(
    (link, i) => link !== undefined && link.kind === 'folder' && link.parentFolderId === (i === 0 ? null : chain[i - 1]!.id),
  );
}

/**
 * The folder `folderId` and its ancestors, read consistently, undefined when it is no folder. The
 * chain follows `parentFolderId`, which every move changes in its committing transaction, so it is
 * right even while a moved tree's `ancestorIds` are still being rebased: the stored ids are tried
 * first (one BatchGet) and the links walked one by one only when they do not match.
 */
export async function ancestryOf(folderId: string): Promise<Ancestry | undefined> {
  const folder = await getItem(folderId, true);
  if (folder?.kind !== 'folder') return undefined;
  const byId = new Map((await getItems(folder.ancestorIds, true)).map((item) => [item.id, item as FolderRecord]));
  const guess = folder.ancestorIds.map((id) => byId.get(id));
  if (linked(folder, guess)) return { folder, ancestors: guess };
  const ancestors: FolderRecord[] = [];
  let link = folder;
  while (link.parentFolderId) {
    const parent = await getItem(link.parentFolderId, true);
    if (parent?.kind !== 'folder' || ancestors.length > MAX_FOLDER_DEPTH || ancestors.some((a) => a.id === parent.id)) {
      throw new ConflictError(`The folders above ${folderId} are being changed by another request; try again.`);
    }
    ancestors.unshift(parent);
    link = parent;
  }
  return { folder, ancestors };
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
