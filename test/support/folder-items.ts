import { expect } from 'vitest';
import { call, makeOrganization } from './api.js';
import { makeMarkup, workspaceOf } from './items.js';

/** The fields every folder item (folder or markup) answers with, in order. */
export const FOLDER_ITEM_FIELDS = [
  'assignedRoleSlugs',
  'createdAt',
  'deletedAt',
  'id',
  'modifiedAt',
  'name',
  'parentFolderId',
  'scopes',
  'type',
  'workspaceId',
];

/** An organization with its default workspace's root and archive folder ids at hand. */
export async function makeItemsWorkspace() {
  const org = await makeOrganization();
  const workspace = await workspaceOf(org.workspaceId);
  const markup = (parentFolderId: string, name = 'Landing page') =>
    makeMarkup({ workspaceId: org.workspaceId, organizationId: org.organizationId, parentFolderId, name });
  return { ...org, rootId: workspace.rootFolderId, archiveId: workspace.archiveFolderId, markup };
}

export const names = (items: { name: string }[]) => items.map((item) => item.name);
export const ids = (items: { id: string }[]) => items.map((item) => item.id);

/** Names of a folder's children in `order` (200 asserted). */
export async function childNames(key: string, folderId: string, order = 'az'): Promise<string[]> {
  const response = await call('GET', `/items/${folderId}/items`, { key, query: { order, limit: 100 } });
  expect(response.status).toBe(200);
  return names(response.body.data.items);
}

/** Names of a folder's ancestors, root first (200 asserted). */
export async function ancestorsOf(key: string, folderId: string): Promise<string[]> {
  const response = await call('GET', `/items/${folderId}`, { key });
  expect(response.status).toBe(200);
  return names(response.body.data.ancestors);
}
