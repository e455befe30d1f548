import { api, ApiError } from './api.js';

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

export interface FolderWithAncestors extends FolderItem {
  ancestors: FolderItem[];
}

export interface Markup {
  id: string;
  name: string;
  type: string;
  thumbnailUrl: string;
  activeThreads: number;
  scopes: string[];
  isReady: boolean;
  conversionStatus?: string;
  workspaceId: string;
  parentFolderId: string | null;
  url?: string;
}

/** A folder's child as the screens show it: a folder, or a markup with its details. */
export type Entry = { kind: 'folder'; item: FolderItem } | { kind: 'markup'; item: FolderItem; markup?: Markup };

interface Page<T> {
  data: T[];
}

export const sessionWorkspaces = async (token: string): Promise<WorkspaceMembership[]> =>
  (await api<{ workspaces: WorkspaceMembership[] }>('/auth/session', { token })).workspaces;

export const getFolder = (token: string, id: string) => api<FolderWithAncestors>(`/items/${encodeURIComponent(id)}`, { token });

/** A folder's children (folders first, then markups, by name), each markup with its thumbnail and scopes. */
export async function listFolder(token: string, folderId: string): Promise<Entry[]> {
  const { items } = await api<{ items: FolderItem[] }>(`/items/${encodeURIComponent(folderId)}/items?order=az&limit=100`, { token });
  const folders = items.filter((item) => item.type === 'folder');
  const markups = items.filter((item) => item.type === 'markup');
  const details = await Promise.all(markups.map((item) => getMarkup(token, item.id).catch(() => undefined)));
  return [...folders.map((item) => ({ kind: 'folder' as const, item })), ...markups.map((item, index) => ({ kind: 'markup' as const, item, markup: details[index] }))];
}

export const getMarkup = (token: string, id: string) => api<Markup>(`/markups/${encodeURIComponent(id)}`, { token });

/** GET /markups/search: name or URL, in any folder of the workspace, newest first. */
export const searchMarkups = async (token: string, workspaceId: string, query: string): Promise<Markup[]> =>
  (await api<Page<Markup>>(`/markups/search?workspaceId=${encodeURIComponent(workspaceId)}&query=${encodeURIComponent(query)}&limit=50`, { token })).data;

export const createFromUrl = (token: string, body: { url: string; name?: string; workspaceId: string; parentFolderId: string }) =>
  api<Markup>('/markups/url', { method: 'POST', token, body });

export const createFolder = (token: string, parentFolderId: string, name: string) => api<FolderItem>('/items', { method: 'POST', token, body: { parentFolderId, name } });

export const renameMarkup = (token: string, id: string, name: string) => api<Markup>(`/markups/${encodeURIComponent(id)}`, { method: 'POST', token, body: { name } });
export const renameFolder = (token: string, id: string, name: string) => api<FolderItem>(`/items/${encodeURIComponent(id)}`, { method: 'PATCH', token, body: { name } });

export const moveItem = (token: string, id: string, parentFolderId: string) =>
  api<FolderItem>(`/items/${encodeURIComponent(id)}/move`, { method: 'PATCH', token, body: { parentFolderId } });

export const archiveItem = (token: string, id: string) => api<unknown>('/items/archive', { method: 'PATCH', token, body: { folderItemIds: [id] } });

export const deleteMarkup = (token: string, id: string) => api<unknown>(`/markups/${encodeURIComponent(id)}`, { method: 'DELETE', token });
export const deleteFolder = (token: string, id: string) => api<unknown>(`/items/${encodeURIComponent(id)}`, { method: 'DELETE', token });

/** What a failure says on screen: the problem's `detail`, else `fallback`. */
export const detailOf = (failure: unknown, fallback: string): string => (failure instanceof ApiError ? failure.detail : fallback);

export const isUnauthorized = (failure: unknown): boolean => failure instanceof ApiError && failure.status === 401;

interface UploadPolicy {
  fileId: string;
  policy: { url: string; fields: Record<string, string> };
}

/**
 * Uploads `file` into `folderId` through the presigned flow (DESIGN.md, docs/api-files.md "Uploads"):
 * POST /uploads/upload-policy, the form POST to storage with every policy field and the file last
 * (XMLHttpRequest, for its upload progress), then POST /uploads/upload-complete with storage's ETag.
 * Answers the file id for POST /markups/from-files.
 */
export async function uploadFile(token: string, folderId: string, file: File, onProgress: (fraction: number) => void): Promise<string> {
  const contentType = file.type || 'application/octet-stream';
  const { fileId, policy } = await api<UploadPolicy>('/uploads/upload-policy', {
    method: 'POST',
    token,
    body: { resourceType: 'markup_asset', resourceId: folderId, filename: file.name, contentType, filesize: file.size },
  });
  const form = new FormData();
  for (const [name, value] of Object.entries(policy.fields)) form.append(name, value);
  form.append('file', file);
  const etag = await postForm(policy.url, form, onProgress);
  await api('/uploads/upload-complete', { method: 'POST', token, body: { fileId, etag } });
  return fileId;
}

function postForm(url: string, form: FormData, onProgress: (fraction: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', url);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      const etag = request.getResponseHeader('ETag');
      if (request.status >= 200 && request.status < 300 && etag) {
        onProgress(1);
        resolve(etag);
        return;
      }
      // Storage answers S3's XML errors: its <Message> is the detail.
      const message = /<Message>([^<]*)<\/Message>/.exec(request.responseText ?? '')?.[1];
      reject(new ApiError(request.status, message ? `Storage refused the upload: ${message}` : `Storage refused the upload (status ${request.status}).`));
    };
    request.onerror = () => reject(new ApiError(0, 'The upload could not reach storage. Check your connection and try again.'));
    request.send(form);
  });
}

export const createFromFiles = (token: string, body: { workspaceId: string; parentFolderId: string; fileIds: string[]; name?: string }) =>
  api<Markup>('/markups/from-files', { method: 'POST', token, body });
