import { StorageRefusal, uploadThroughPolicy } from '../board/upload.js';
import { api, ApiError, type RequestOptions } from './api.js';

export { markupGroups } from './markup-groups.js';

/**
 * What the browsing screens read and change through the API: the member's workspaces (GET
 * /auth/session, with their role), a folder's children with each markup's thumbnail and scopes,
 * search, and the writes (create from a URL or from uploaded files, rename, move, archive, delete).
 * Controls are shown by the `scopes` the API returns for each item (the permission table decides).
 */
export type Role = 'owner' | 'admin' | 'contributor' | 'viewer';

export interface WorkspaceMembership {
  id: string;
  name: string;
  role: Role;
  rootFolderId: string;
}

export interface FolderItem {
  id: string;
  type: 'folder' | 'markup';
  name: string;
  scopes: string[];
  parentFolderId: string | null;
  workspaceId: string;
  folderCount?: number;
  projectCount?: number;
}

/** What a markup's card shows; child listings carry it (extension fields), so a folder is one request. */
export interface MarkupCard {
  id: string;
  name: string;
  thumbnailUrl: string;
  activeThreads: number;
  /** Threads the caller has not read (child listings only). */
  unreadThreads?: number;
  isReady: boolean;
  conversionStatus?: string;
}

/** A markup in a child listing: the folder-item fields and its card, with its type as `markupType`. */
export interface ChildMarkup extends FolderItem, MarkupCard {
  type: 'markup';
  markupType: string;
}

export interface FolderWithAncestors extends FolderItem {
  ancestors: FolderItem[];
}

export interface Markup extends MarkupCard {
  type: string;
  scopes: string[];
  workspaceId: string;
  parentFolderId: string | null;
  url?: string;
}

/** A folder's child as the screens show it: a folder, or a markup with its card (`kind` names its markup type). */
export type Entry = { kind: 'folder'; item: FolderItem } | { kind: 'markup'; item: ChildMarkup; markup: MarkupCard & { type: string } };

interface Page<T> {
  data: T[];
}

export const sessionWorkspaces = async (token: string): Promise<WorkspaceMembership[]> =>
  (await api<{ workspaces: WorkspaceMembership[] }>('/auth/session', { token })).workspaces;

export const getFolder = (token: string, id: string) => api<FolderWithAncestors>(`/items/${encodeURIComponent(id)}`, { token });

/**
 * A folder's children (folders first, then markups, by name) in ONE request: each listed markup
 * carries its card (thumbnail, open and unread threads, conversion state), so no markup is read on
 * its own.
 */
export async function listFolder(token: string, folderId: string): Promise<Entry[]> {
  const { items } = await api<{ items: (FolderItem | ChildMarkup)[] }>(`/items/${encodeURIComponent(folderId)}/items?order=az&limit=100`, {
    token,
  });
  const folders = items.filter((item) => item.type === 'folder');
  const markups = items.filter((item): item is ChildMarkup => item.type === 'markup');
  return [
    ...folders.map((item) => ({ kind: 'folder' as const, item })),
    ...markups.map((item) => ({ kind: 'markup' as const, item, markup: { ...item, type: item.markupType } })),
  ];
}

/** GET /markups/search: name or URL, in any folder of the workspace, newest first. */
export const searchMarkups = async (token: string, workspaceId: string, query: string): Promise<Markup[]> =>
  (
    await api<Page<Markup>>(`/markups/search?workspaceId=${encodeURIComponent(workspaceId)}&query=${encodeURIComponent(query)}&limit=50`, {
      token,
    })
  ).data;

export const createFromUrl = (token: string, body: { url: string; name?: string; workspaceId: string; parentFolderId: string }) =>
  api<Markup>('/markups/url', { method: 'POST', token, body });

export const createFolder = (token: string, parentFolderId: string, name: string) =>
  api<FolderItem>('/items', { method: 'POST', token, body: { parentFolderId, name } });

/** Renames a folder or a markup (PATCH /items/{id}: the `folderItem:edit` scope of a listed item says who may). */
export const renameItem = (token: string, id: string, name: string) =>
  api<FolderItem>(`/items/${encodeURIComponent(id)}`, { method: 'PATCH', token, body: { name } });

export const moveItem = (token: string, id: string, parentFolderId: string) =>
  api<FolderItem>(`/items/${encodeURIComponent(id)}/move`, { method: 'PATCH', token, body: { parentFolderId } });

export const archiveItem = (token: string, id: string) =>
  api<unknown>('/items/archive', { method: 'PATCH', token, body: { folderItemIds: [id] } });

/** Deletes a folder with all it holds, or a markup (DELETE /items/{id}: the `folderItem:delete` scope says who may). */
export const deleteItem = (token: string, id: string) => api<unknown>(`/items/${encodeURIComponent(id)}`, { method: 'DELETE', token });

/** What a failure says on screen: the problem's `detail`, else `fallback`. */
export const detailOf = (failure: unknown, fallback: string): string => (failure instanceof ApiError ? failure.detail : fallback);

export const isUnauthorized = (failure: unknown): boolean => failure instanceof ApiError && failure.status === 401;

/**
 * Uploads `file` into `folderId` through the presigned flow the board's attachments use too
 * (`uploadThroughPolicy`, web/board/upload.ts), as a `markup_asset`. Answers the file id for POST
 * /markups/from-files; a refusal is an `ApiError` whose detail the screen shows.
 */
export async function uploadFile(token: string, folderId: string, file: File, onProgress: (fraction: number) => void): Promise<string> {
  const request = <T>(path: string, options: Omit<RequestOptions, 'token'> = {}) => api<T>(path, { ...options, token });
  try {
    return await uploadThroughPolicy(request, { resourceType: 'markup_asset', resourceId: folderId }, file, onProgress);
  } catch (failure) {
    throw failure instanceof StorageRefusal ? new ApiError(failure.status, failure.message) : failure;
  }
}

export const createFromFiles = (token: string, body: { workspaceId: string; parentFolderId: string; fileIds: string[]; name?: string }) =>
  api<Markup>('/markups/from-files', { method: 'POST', token, body });
