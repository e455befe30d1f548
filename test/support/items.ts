import { randomUUID } from 'node:crypto';
import { toItem, workspaceMarkupsPartition, type MarkupRecord } from '../../shared/db/items.js';
import { queryAll } from '../../shared/db/core/paging.js';
import { batchPut, putNew, transact } from '../../shared/db/core/transact.js';
import { getWorkspace, type WorkspaceRecord } from '../../shared/db/workspaces.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import type { Role } from '../../shared/db/users.js';
import { call } from './api.js';

export type MarkupOverrides = Partial<MarkupRecord> & Pick<MarkupRecord, 'workspaceId' | 'organizationId' | 'parentFolderId'>;

/** A ready webpage markup record (not written): `overrides` over the defaults every item test uses. */
export function markupRecord(overrides: MarkupOverrides): MarkupRecord {
  const at = Date.now();
  return {
    kind: 'markup',
    id: randomUUID(),
    name: 'Landing page',
    createdAt: at,
    modifiedAt: at,
    activityAt: at,
    type: 'webpage',
    url: 'https://example.com/',
    readOnly: false,
    status: 'editing',
    isReady: true,
    thumbnailState: 'unavailable',
    note: { id: randomUUID(), note: '', showNoteOnProjectOpen: false },
    retainOriginal: false,
    hasRetainedOriginal: false,
    activeThreads: 0,
    createdBy: randomUUID(),
    // Tests send the jobs of the pending markups they write: the local stack's pending-work sweep
    // leaves them alone, as if a run had taken them (a test of the sweep overrides this).
    workStartedAt: at,
    ...overrides,
  };
}

/**
 * A webpage markup written straight to the table (through `toItem`, so its index keys are the real
 * ones). Markups have no create route in this group; this is how item tests put them in folders.
 */
export async function makeMarkup(overrides: MarkupOverrides): Promise<MarkupRecord> {
  const record = markupRecord(overrides);
  await transact([putNew(toItem(record))]);
  return record;
}

/** Many markups in one folder, written 25 to a BatchWrite, for tests of large trees. */
export async function makeMarkups(count: number, overrides: MarkupOverrides): Promise<MarkupRecord[]> {
  const base = Date.now();
  const records = Array.from({ length: count }, (_, i) =>
    markupRecord({ name: `Page ${i}`, createdAt: base + i, activityAt: base + i, ...overrides }),
  );
  await batchPut(records.map(toItem));
  return records;
}

/** The workspace record (root and archive folder ids). */
export async function workspaceOf(workspaceId: string): Promise<WorkspaceRecord> {
  const workspace = await getWorkspace(workspaceId);
  if (!workspace) throw new Error(`workspace ${workspaceId} is missing`);
  return workspace;
}

/** Creates a folder through the API and returns it (the `data` of the 200). */
export async function makeFolder(key: string, parentFolderId: string, name: string): Promise<{ id: string; name: string }> {
  const response = await call('POST', '/items', { key, body: { parentFolderId, name } });
  if (response.status !== 200) throw new Error(`creating folder ${name}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/** A chain of nested folders `names[0]/names[1]/…` under `parentFolderId`; returns them top first. */
export async function makeFolderChain(key: string, parentFolderId: string, names: string[]): Promise<{ id: string; name: string }[]> {
  const chain: { id: string; name: string }[] = [];
  let parent = parentFolderId;
  for (const name of names) {
    const folder = await makeFolder(key, parent, name);
    chain.push(folder);
    parent = folder.id;
  }
  return chain;
}

/** Ids of a workspace's markups as its GSI4 markup list holds them. */
export async function workspaceMarkupIds(workspaceId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const item of queryAll('GSI4', workspaceMarkupsPartition(workspaceId))) ids.add(item.id as string);
  return ids;
}

/** A workspace key acting as a member with `role`. */
export async function makeMemberKey(workspaceId: string, role: Role): Promise<string> {
  const issued = await createWorkspaceKey(workspaceId, { email: `${role}-${randomUUID()}@example.com`, role });
  return issued.apiKey;
}

/** Every child of a folder in one order, following `nextCursor` to the end; returns the pages. */
export async function listAllPages(
  key: string,
  folderId: string,
  query: Record<string, string | number>,
): Promise<{ id: string; name: string }[][]> {
  const pages: { id: string; name: string }[][] = [];
  let before: string | undefined;
  do {
    const response = await call('GET', `/items/${folderId}/items`, { key, query: { ...query, before } });
    if (response.status !== 200) throw new Error(`listing ${folderId}: ${response.status} ${JSON.stringify(response.body)}`);
    pages.push(response.body.data.items);
    before = response.body.data.nextCursor ?? undefined;
  } while (before);
  return pages;
}
