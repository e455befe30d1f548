import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getItem, MAX_FOLDER_DEPTH, type FolderRecord } from '../../shared/db/items.js';
import { originalKey, retainedOriginalsPartition } from '../../shared/db/originals.js';
import { queryAll } from '../../shared/db/paging.js';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { call, makeOrganization } from '../support/api.js';
import { makeRetainedOriginal } from '../support/fixtures.js';
import {
  listAllPages,
  makeFolder,
  makeFolderChain,
  makeMarkup,
  makeMarkups,
  makeMemberKey,
  workspaceMarkupIds,
  workspaceOf,
} from '../support/items.js';
import { missingId } from '../support/ids.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

const FOLDER_ITEM_FIELDS = [
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
async function setUp() {
  const org = await makeOrganization();
  const workspace = await workspaceOf(org.workspaceId);
  const markup = (parentFolderId: string, name = 'Landing page') =>
    makeMarkup({ workspaceId: org.workspaceId, organizationId: org.organizationId, parentFolderId, name });
  return { ...org, rootId: workspace.rootFolderId, archiveId: workspace.archiveFolderId, markup };
}

const names = (items: { name: string }[]) => items.map((item) => item.name);
const ids = (items: { id: string }[]) => items.map((item) => item.id);

async function childNames(key: string, folderId: string, order = 'az'): Promise<string[]> {
  const response = await call('GET', `/items/${folderId}/items`, { key, query: { order, limit: 100 } });
  expect(response.status).toBe(200);
  return names(response.body.data);
}

async function ancestorsOf(key: string, folderId: string): Promise<string[]> {
  const response = await call('GET', `/items/${folderId}`, { key });
  expect(response.status).toBe(200);
  return names(response.body.data.ancestors);
}

describe('GET /items/:id (Folder items: a folder read returns the folder with its ancestors; a markup read returns the markup)', () => {
  it('returns a folder with the folder-item fields and its ancestors, root first', async () => {
    const ws = await setUp();
    const [plans, drafts] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Plans', 'Drafts']);

    const response = await call('GET', `/items/${drafts!.id}`, { key: ws.workspaceKey });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data).sort()).toEqual([...FOLDER_ITEM_FIELDS, 'ancestors'].sort());
    expect(response.body.data).toMatchObject({
      id: drafts!.id,
      type: 'folder',
      name: 'Drafts',
      parentFolderId: plans!.id,
      workspaceId: ws.workspaceId,
      deletedAt: null,
      assignedRoleSlugs: [],
      scopes: ['folderItem:view', 'folderItem:edit', 'folderItem:delete'],
    });
    expect(typeof response.body.data.createdAt).toBe('number');
    expect(typeof response.body.data.modifiedAt).toBe('number');
    expect(ids(response.body.data.ancestors)).toEqual([ws.rootId, plans!.id]);
    expect(Object.keys(response.body.data.ancestors[1]).sort()).toEqual(FOLDER_ITEM_FIELDS);
  });

  it('returns the root folder with no parent and no ancestors', async () => {
    const ws = await setUp();

    const response = await call('GET', `/items/${ws.rootId}`, { key: ws.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: ws.rootId, parentFolderId: null, ancestors: [] });
  });

  it('returns a markup in the Markup shape (ISO times, markup scopes)', async () => {
    const ws = await setUp();
    const markup = await ws.markup(ws.rootId, 'Home page');

    const response = await call('GET', `/items/${markup.id}`, { key: ws.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: markup.id, type: 'webpage', name: 'Home page', url: 'https://example.com/', isReady: true });
    expect(response.body.data.createdAt).toBe(new Date(markup.createdAt).toISOString());
    expect(response.body.data.scopes).toContain('view-project');
  });

  it('answers 404 for an unknown id and 400 for an id that is not a UUID', async () => {
    const ws = await setUp();

    const missing = await call('GET', `/items/${missingId}`, { key: ws.workspaceKey });
    const malformed = await call('GET', '/items/not-a-uuid', { key: ws.workspaceKey });

    expect(missing.status).toBe(404);
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].pointer).toBe('/params/id');
  });

  it("refuses a workspace key on another workspace's item and an organization key on another organization's item with 403", async () => {
    const ws = await setUp();
    const other = await makeSecondWorkspace(ws.orgKey);
    const stranger = await makeOrganization();

    const otherWorkspace = await call('GET', `/items/${other.rootFolderId}`, { key: ws.workspaceKey });
    const otherOrganization = await call('GET', `/items/${ws.rootId}`, { key: stranger.orgKey });
    const sameOrganization = await call('GET', `/items/${other.rootFolderId}`, { key: ws.orgKey });

    expect(otherWorkspace.status).toBe(403);
    expect(otherOrganization.status).toBe(403);
    expect(sameOrganization.status).toBe(200);
  });

  it("gives each caller scopes from its role: viewers view, contributors edit, admins and owners delete", async () => {
    const ws = await setUp();
    const viewer = await makeMemberKey(ws.workspaceId, 'viewer');
    const contributor = await makeMemberKey(ws.workspaceId, 'contributor');

    const asViewer = await call('GET', `/items/${ws.rootId}`, { key: viewer });
    const asContributor = await call('GET', `/items/${ws.rootId}`, { key: contributor });
    const asOwner = await call('GET', `/items/${ws.rootId}`, { key: ws.orgKey });

    expect(asViewer.body.data.scopes).toEqual(['folderItem:view']);
    expect(asContributor.body.data.scopes).toEqual(['folderItem:view', 'folderItem:edit']);
    expect(asOwner.body.data.scopes).toEqual(['folderItem:view', 'folderItem:edit', 'folderItem:delete']);
  });
});

describe('GET /items/:id/items (child items: FolderItemOrder, cursor pagination)', () => {
  it('lists folders and markups together, each with its type, by name ascending by default', async () => {
    const ws = await setUp();
    await makeFolder(ws.workspaceKey, ws.rootId, 'beta');
    await ws.markup(ws.rootId, 'Alpha page');
    await makeFolder(ws.workspaceKey, ws.rootId, 'Gamma');

    const response = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data.map((item: { name: string; type: string }) => [item.name, item.type])).toEqual([
      ['Alpha page', 'markup'],
      ['beta', 'folder'],
      ['Gamma', 'folder'],
    ]);
    expect(Object.keys(response.body.data[0]).sort()).toEqual(FOLDER_ITEM_FIELDS);
    expect(response.body).toMatchObject({ hasMore: false, nextCursor: null, prevCursor: null });
  });

  it('orders by za, by newest first (created) and by most recent activity first (activity)', async () => {
    const ws = await setUp();
    const first = await makeFolder(ws.workspaceKey, ws.rootId, 'first');
    await makeFolder(ws.workspaceKey, ws.rootId, 'second');
    await makeFolder(ws.workspaceKey, ws.rootId, 'third');
    await makeFolder(ws.workspaceKey, first.id, 'child of first');

    expect(await childNames(ws.workspaceKey, ws.rootId, 'za')).toEqual(['third', 'second', 'first']);
    expect(await childNames(ws.workspaceKey, ws.rootId, 'created')).toEqual(['third', 'second', 'first']);
    expect(await childNames(ws.workspaceKey, ws.rootId, 'activity')).toEqual(['first', 'third', 'second']);
  });

  it('follows nextCursor to the end visiting each child exactly once in every order, and since=<prevCursor> goes back', async () => {
    const ws = await setUp();
    const markups = await makeMarkups(23, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: ws.rootId });
    for (const name of ['F1', 'F2']) await makeFolder(ws.workspaceKey, ws.rootId, name);
    const expected = [...ids(markups)].length + 2;

    for (const order of ['az', 'za', 'activity', 'created']) {
      const pages = await listAllPages(ws.workspaceKey, ws.rootId, { order, limit: 5 });
      const seen = pages.flat().map((item) => item.id);

      expect(pages).toHaveLength(5);
      expect(seen).toHaveLength(expected);
      expect(new Set(seen).size).toBe(expected);
    }

    const first = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'created', limit: 5 } });
    const second = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'created', limit: 5, before: first.body.nextCursor } });
    const back = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'created', limit: 5, since: second.body.prevCursor } });

    expect(second.body.prevCursor).toEqual(expect.any(String));
    expect(ids(back.body.data)).toEqual(ids(first.body.data));
  });

  it('answers page N as the children after the first (N-1)*limit, with working cursors, and an empty page past the end', async () => {
    const ws = await setUp();
    await makeMarkups(12, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: ws.rootId });
    const all = (await listAllPages(ws.workspaceKey, ws.rootId, { order: 'created', limit: 100 })).flat();

    const third = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'created', limit: 5, page: 3 } });
    const second = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'created', limit: 5, page: 2 } });
    const back = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'created', limit: 5, since: second.body.prevCursor } });
    const beyond = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { limit: 5, page: 4 } });

    expect(ids(third.body.data)).toEqual(ids(all.slice(10, 12)));
    expect(third.body.hasMore).toBe(false);
    expect(ids(second.body.data)).toEqual(ids(all.slice(5, 10)));
    expect(second.body.hasMore).toBe(true);
    expect(ids(back.body.data)).toEqual(ids(all.slice(0, 5)));
    expect(beyond.body).toMatchObject({ data: [], hasMore: false, nextCursor: null });
  });

  it('accepts ttl in seconds and answers 400 for a bad order, limit, page, ttl, or page with a cursor', async () => {
    const ws = await setUp();
    const path = `/items/${ws.rootId}/items`;

    const withTtl = await call('GET', path, { key: ws.workspaceKey, query: { ttl: 3600 } });
    const bad = await Promise.all(
      [
        { order: 'name' },
        { limit: 0 },
        { limit: 101 },
        { page: 0 },
        { ttl: 0 },
        { ttl: 604801 },
        { ttl: 'soon' },
        { page: 2, before: 'abc.def' },
      ].map((query) => call('GET', path, { key: ws.workspaceKey, query })),
    );

    expect(withTtl.status).toBe(200);
    for (const response of bad) expect(response.status).toBe(400);
  });

  it('refuses a tampered cursor and a cursor of another order or folder with 400', async () => {
    const ws = await setUp();
    const other = await makeFolder(ws.workspaceKey, ws.rootId, 'Other');
    await makeMarkups(3, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: ws.rootId });
    const page = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'az', limit: 1 } });
    const cursor: string = page.body.nextCursor;

    const tampered = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'az', before: `${cursor}x` } });
    const otherOrder = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'za', before: cursor } });
    const otherFolder = await call('GET', `/items/${other.id}/items`, { key: ws.workspaceKey, query: { order: 'az', before: cursor } });

    expect([tampered.status, otherOrder.status, otherFolder.status]).toEqual([400, 400, 400]);
  });

  it('answers 404 for a markup id or an unknown id, and 403 outside the key scope', async () => {
    const ws = await setUp();
    const markup = await ws.markup(ws.rootId);
    const other = await makeSecondWorkspace(ws.orgKey);

    const ofMarkup = await call('GET', `/items/${markup.id}/items`, { key: ws.workspaceKey });
    const unknown = await call('GET', `/items/${missingId}/items`, { key: ws.workspaceKey });
    const outside = await call('GET', `/items/${other.rootFolderId}/items`, { key: ws.workspaceKey });

    expect([ofMarkup.status, unknown.status, outside.status]).toEqual([404, 404, 403]);
  });
});

describe('POST /items (create folder: 200 with { data: folder })', () => {
  it('creates a folder under the parent and answers 200 with it', async () => {
    const ws = await setUp();

    const response = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name: '  Designs  ' } });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data).sort()).toEqual(FOLDER_ITEM_FIELDS);
    expect(response.body.data).toMatchObject({ type: 'folder', name: 'Designs', parentFolderId: ws.rootId, workspaceId: ws.workspaceId });
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Designs']);
  });

  it('numbers a clashing name (case-insensitive) as "Name (2)", "Name (3)"; a markup of that name does not clash', async () => {
    const ws = await setUp();
    await ws.markup(ws.rootId, 'Designs');
    const create = (name: string) => call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name } });

    const first = await create('Designs');
    const second = await create('designs');
    const third = await create('Designs');

    expect([first.body.data.name, second.body.data.name, third.body.data.name]).toEqual(['Designs', 'designs (2)', 'Designs (3)']);
  });

  it('uses fallbackName on a clash, and numbers the fallback when it clashes too', async () => {
    const ws = await setUp();
    const create = (name: string, fallbackName?: string) =>
      call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name, fallbackName } });
    await create('Designs');

    const withFallback = await create('Designs', 'Designs copy');
    const fallbackTaken = await create('Designs', 'Designs copy');
    const noClash = await create('Other', 'Unused');

    expect(withFallback.body.data.name).toBe('Designs copy');
    expect(fallbackTaken.body.data.name).toBe('Designs copy (2)');
    expect(noClash.body.data.name).toBe('Other');
  });

  it(`refuses a folder deeper than ${MAX_FOLDER_DEPTH} levels below the root with 422 naming the maximum`, async () => {
    const ws = await setUp();
    const chain = await makeFolderChain(ws.workspaceKey, ws.rootId, Array.from({ length: MAX_FOLDER_DEPTH }, (_, i) => `L${i + 1}`));

    const response = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: chain.at(-1)!.id, name: 'Too deep' } });

    expect(response.status).toBe(422);
    expect(response.body.detail).toContain(`at most ${MAX_FOLDER_DEPTH} levels`);
  });

  it('allows folders in the archive folder', async () => {
    const ws = await setUp();

    const response = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.archiveId, name: 'Old work' } });

    expect(response.status).toBe(200);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual(['Old work']);
  });

  it('marks activity on the parent folder', async () => {
    const ws = await setUp();
    const older = await makeFolder(ws.workspaceKey, ws.rootId, 'older');
    await makeFolder(ws.workspaceKey, ws.rootId, 'newer');

    await makeFolder(ws.workspaceKey, older.id, 'inside older');

    expect(await childNames(ws.workspaceKey, ws.rootId, 'activity')).toEqual(['older', 'newer']);
  });

  it('answers 404 for an unknown parent or a markup parent, 403 outside the scope or for a viewer, 400 for a bad body', async () => {
    const ws = await setUp();
    const markup = await ws.markup(ws.rootId);
    const other = await makeSecondWorkspace(ws.orgKey);
    const viewer = await makeMemberKey(ws.workspaceId, 'viewer');

    const unknown = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: missingId, name: 'X' } });
    const underMarkup = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: markup.id, name: 'X' } });
    const outside = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: other.rootFolderId, name: 'X' } });
    const asViewer = await call('POST', '/items', { key: viewer, body: { parentFolderId: ws.rootId, name: 'X' } });
    const noName = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId } });
    const badParent = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: 'root', name: 'X' } });

    expect([unknown.status, underMarkup.status, outside.status, asViewer.status]).toEqual([404, 404, 403, 403]);
    expect(noName.status).toBe(400);
    expect(noName.body.errors[0].pointer).toBe('/body/name');
    expect(badParent.body.errors[0].pointer).toBe('/body/parentFolderId');
  });
});

describe('PATCH /items/:id (rename a folder or markup)', () => {
  it('renames a folder and its place in the name order follows', async () => {
    const ws = await setUp();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'aaa');
    await makeFolder(ws.workspaceKey, ws.rootId, 'mmm');

    const response = await call('PATCH', `/items/${folder.id}`, { key: ws.workspaceKey, body: { name: 'zzz' } });

    expect(response.status).toBe(204);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['mmm', 'zzz']);
  });

  it('renames a markup', async () => {
    const ws = await setUp();
    const markup = await ws.markup(ws.rootId, 'Before');

    const response = await call('PATCH', `/items/${markup.id}`, { key: ws.workspaceKey, body: { name: 'After' } });
    const read = await call('GET', `/items/${markup.id}`, { key: ws.workspaceKey });

    expect(response.status).toBe(204);
    expect(read.body.data.name).toBe('After');
  });

  it('refuses renaming the root or archive folder with 422 and taking a sibling folder name with 409', async () => {
    const ws = await setUp();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'One');
    await makeFolder(ws.workspaceKey, ws.rootId, 'Two');

    const root = await call('PATCH', `/items/${ws.rootId}`, { key: ws.workspaceKey, body: { name: 'X' } });
    const archive = await call('PATCH', `/items/${ws.archiveId}`, { key: ws.workspaceKey, body: { name: 'X' } });
    const clash = await call('PATCH', `/items/${folder.id}`, { key: ws.workspaceKey, body: { name: 'two' } });
    const ownCase = await call('PATCH', `/items/${folder.id}`, { key: ws.workspaceKey, body: { name: 'ONE' } });

    expect([root.status, archive.status, clash.status, ownCase.status]).toEqual([422, 422, 409, 204]);
  });

  it('answers 404 for an unknown id, 403 outside the scope or for a viewer, 400 for an empty name', async () => {
    const ws = await setUp();
    const other = await makeSecondWorkspace(ws.orgKey);
    const folder = await makeFolder(ws.orgKey, other.rootFolderId, 'Theirs');
    const viewer = await makeMemberKey(ws.workspaceId, 'viewer');
    const mine = await makeFolder(ws.workspaceKey, ws.rootId, 'Mine');

    const unknown = await call('PATCH', `/items/${missingId}`, { key: ws.workspaceKey, body: { name: 'X' } });
    const outside = await call('PATCH', `/items/${folder.id}`, { key: ws.workspaceKey, body: { name: 'X' } });
    const asViewer = await call('PATCH', `/items/${mine.id}`, { key: viewer, body: { name: 'X' } });
    const empty = await call('PATCH', `/items/${mine.id}`, { key: ws.workspaceKey, body: { name: ' ' } });

    expect([unknown.status, outside.status, asViewer.status, empty.status]).toEqual([404, 403, 403, 400]);
  });
});

describe('DELETE /items/:id (a markup, or a folder with everything under it)', () => {
  it('deletes a markup: it is gone from reads and from the workspace markup list', async () => {
    const ws = await setUp();
    const markup = await ws.markup(ws.rootId);

    const response = await call('DELETE', `/items/${markup.id}`, { key: ws.workspaceKey });

    expect(response.status).toBe(204);
    expect((await call('GET', `/items/${markup.id}`, { key: ws.workspaceKey })).status).toBe(404);
    expect((await workspaceMarkupIds(ws.workspaceId)).has(markup.id)).toBe(false);
  });

  it('deletes a folder with every folder and markup below it, leaving its siblings alone', async () => {
    const ws = await setUp();
    const [top, middle, bottom] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Top', 'Middle', 'Bottom']);
    const side = await makeFolder(ws.workspaceKey, top!.id, 'Side');
    const inside = await Promise.all([ws.markup(top!.id), ws.markup(middle!.id), ws.markup(bottom!.id), ws.markup(side.id)]);
    const sibling = await makeFolder(ws.workspaceKey, ws.rootId, 'Sibling');
    const kept = await ws.markup(sibling.id);

    const response = await call('DELETE', `/items/${top!.id}`, { key: ws.workspaceKey });

    expect(response.status).toBe(204);
    for (const id of [top!.id, middle!.id, bottom!.id, side.id, ...ids(inside)]) {
      expect((await call('GET', `/items/${id}`, { key: ws.workspaceKey })).status).toBe(404);
    }
    expect([...(await workspaceMarkupIds(ws.workspaceId))]).toEqual([kept.id]);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Sibling']);
  });

  it("archives a deleted markup's retained original, so stored bytes no longer count it", async () => {
    const ws = await setUp();
    const markup = await makeMarkup({ workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: ws.rootId, hasRetainedOriginal: true, retainOriginal: true });
    await makeRetainedOriginal({ markupId: markup.id, workspaceId: ws.workspaceId, organizationId: ws.organizationId, filesize: 4096 });

    await call('DELETE', `/items/${markup.id}`, { key: ws.workspaceKey });

    expect((await getStorageBreakdown(ws.organizationId)).originals).toBe(0);
  });

  it('refuses the root and archive folders with 422, contributors with 403, and answers 404 for an unknown id', async () => {
    const ws = await setUp();
    const contributor = await makeMemberKey(ws.workspaceId, 'contributor');
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Keep');

    const root = await call('DELETE', `/items/${ws.rootId}`, { key: ws.workspaceKey });
    const archive = await call('DELETE', `/items/${ws.archiveId}`, { key: ws.orgKey });
    const asContributor = await call('DELETE', `/items/${folder.id}`, { key: contributor });
    const unknown = await call('DELETE', `/items/${missingId}`, { key: ws.workspaceKey });

    expect([root.status, archive.status, asContributor.status, unknown.status]).toEqual([422, 422, 403, 404]);
  });
});

describe('DELETE /items/:id of a folder tree with 2000 markups (nothing left orphaned, within the API time limit)', { timeout: 240_000 }, () => {
  it('removes every folder and markup of the tree', async () => {
    const ws = await setUp();
    const top = await makeFolder(ws.workspaceKey, ws.rootId, 'Big');
    const branches = await Promise.all(['A', 'B', 'C', 'D'].map((name) => makeFolderChain(ws.workspaceKey, top.id, [name, `${name}-1`, `${name}-2`])));
    const folders = [top, ...branches.flat()];
    const perFolder = Math.ceil(2000 / folders.length);
    const markups = (
      await Promise.all(folders.map((folder) => makeMarkups(perFolder, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: folder.id })))
    ).flat();
    expect(markups.length).toBeGreaterThanOrEqual(2000);

    const started = performance.now();
    const response = await call('DELETE', `/items/${top.id}`, { key: ws.workspaceKey });
    const elapsed = performance.now() - started;
    console.info(`DELETE of a folder tree with ${markups.length} markups in ${folders.length} folders: ${Math.round(elapsed)} ms`);

    expect(response.status).toBe(204);
    expect((await workspaceMarkupIds(ws.workspaceId)).size).toBe(0);
    const leftovers = await Promise.all([...folders, ...markups.filter((_, i) => i % 50 === 0)].map((item) => getItem(item.id, true)));
    expect(leftovers.filter(Boolean)).toEqual([]);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual([]);
  });
});

describe('PATCH /items/archive (Item active -> in the workspace archive folder)', () => {
  it('moves listed folders and markups into the archive folder', async () => {
    const ws = await setUp();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Done');
    const markup = await ws.markup(ws.rootId, 'Shipped');

    const response = await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [folder.id, markup.id] } });

    expect(response.status).toBe(204);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual(['Done', 'Shipped']);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual([]);
  });

  it('with withPath=1 re-creates the folder path under the archive, reusing folders with the same name', async () => {
    const ws = await setUp();
    const [, drafts] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Client', 'Drafts']);
    const one = await ws.markup(drafts!.id, 'One');
    const two = await ws.markup(drafts!.id, 'Two');

    const first = await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [one.id], withPath: 1 } });
    const second = await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [two.id], withPath: '1' } });

    expect([first.status, second.status]).toEqual([204, 204]);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual(['Client']);
    const archivedOne = await call('GET', `/items/${one.id}`, { key: ws.workspaceKey });
    const archivedDrafts = archivedOne.body.data.parentFolderId;
    expect(await ancestorsOf(ws.workspaceKey, archivedDrafts)).toEqual(['Archive', 'Client']);
    expect(await childNames(ws.workspaceKey, archivedDrafts)).toEqual(['One', 'Two']);
    expect(await childNames(ws.workspaceKey, drafts!.id)).toEqual([]);
  });

  it('numbers an archived folder whose name is taken in the archive', async () => {
    const ws = await setUp();
    const first = await makeFolder(ws.workspaceKey, ws.rootId, 'Sprint');
    await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [first.id] } });
    const second = await makeFolder(ws.workspaceKey, ws.rootId, 'Sprint');

    await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [second.id] } });

    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual(['Sprint', 'Sprint (2)']);
  });

  it('answers 404 for the whole request when one id is unknown, and changes nothing', async () => {
    const ws = await setUp();
    const markup = await ws.markup(ws.rootId, 'Stays');

    const response = await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [markup.id, missingId] } });

    expect(response.status).toBe(404);
    expect(response.body.detail).toContain(missingId);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Stays']);
  });

  it('refuses the root or archive folder with 422, out-of-scope items with 403, and bad lists with 400; nothing changes', async () => {
    const ws = await setUp();
    const other = await makeSecondWorkspace(ws.orgKey);
    const theirs = await makeFolder(ws.orgKey, other.rootFolderId, 'Theirs');
    const mine = await ws.markup(ws.rootId, 'Mine');
    const archive = (body: unknown) => call('PATCH', '/items/archive', { key: ws.workspaceKey, body });

    const root = await archive({ folderItemIds: [mine.id, ws.rootId] });
    const archiveFolder = await archive({ folderItemIds: [ws.archiveId] });
    const outside = await archive({ folderItemIds: [mine.id, theirs.id] });
    const empty = await archive({ folderItemIds: [] });
    const tooMany = await archive({ folderItemIds: Array.from({ length: 51 }, () => mine.id) });
    const badPath = await archive({ folderItemIds: [mine.id], withPath: 2 });

    expect([root.status, archiveFolder.status, outside.status]).toEqual([422, 422, 403]);
    expect([empty.status, tooMany.status, badPath.status]).toEqual([400, 400, 400]);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Mine']);
  });

  it('lets an organization key archive items of several of its workspaces, each into its own archive', async () => {
    const ws = await setUp();
    const other = await makeSecondWorkspace(ws.orgKey);
    const mine = await makeFolder(ws.orgKey, ws.rootId, 'Mine');
    const theirs = await makeFolder(ws.orgKey, other.rootFolderId, 'Theirs');

    const response = await call('PATCH', '/items/archive', { key: ws.orgKey, body: { folderItemIds: [mine.id, theirs.id] } });

    expect(response.status).toBe(204);
    expect(await childNames(ws.orgKey, ws.archiveId)).toEqual(['Mine']);
    expect(await childNames(ws.orgKey, other.archiveFolderId)).toEqual(['Theirs']);
  });
});

describe('PATCH /items/restore (Item archived -> restored to the workspace root)', () => {
  it('moves archived items to the workspace root', async () => {
    const ws = await setUp();
    const [, drafts] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Client', 'Drafts']);
    const markup = await ws.markup(drafts!.id, 'Page');
    await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [markup.id] } });

    const response = await call('PATCH', '/items/restore', { key: ws.workspaceKey, body: { folderItemIds: [markup.id] } });

    expect(response.status).toBe(204);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Client', 'Page']);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual([]);
  });

  it('with withPath=1 puts an item back under the path it was archived from, re-created when it was deleted', async () => {
    const ws = await setUp();
    const [client, drafts] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Client', 'Drafts']);
    const folder = await makeFolder(ws.workspaceKey, drafts!.id, 'Round 1');
    await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [folder.id] } });
    await call('DELETE', `/items/${client!.id}`, { key: ws.workspaceKey });

    const response = await call('PATCH', '/items/restore', { key: ws.workspaceKey, body: { folderItemIds: [folder.id], withPath: 1 } });

    expect(response.status).toBe(204);
    expect(await ancestorsOf(ws.workspaceKey, folder.id)).toEqual(['Root', 'Client', 'Drafts']);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual([]);
  });

  it('leaves items that are not archived where they are', async () => {
    const ws = await setUp();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Live');
    const inner = await ws.markup(folder.id, 'Inner');

    const response = await call('PATCH', '/items/restore', { key: ws.workspaceKey, body: { folderItemIds: [inner.id] } });

    expect(response.status).toBe(204);
    expect(await childNames(ws.workspaceKey, folder.id)).toEqual(['Inner']);
  });

  it('answers 404 for the whole request when one id is unknown, and restores nothing', async () => {
    const ws = await setUp();
    const markup = await ws.markup(ws.rootId, 'Archived');
    await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [markup.id] } });

    const response = await call('PATCH', '/items/restore', { key: ws.workspaceKey, body: { folderItemIds: [markup.id, missingId] } });

    expect(response.status).toBe(404);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual(['Archived']);
  });
});

describe('Move rule 1: workspace keys move only inside their workspace; organization keys may move to another workspace of the organization', () => {
  it('refuses a workspace key moving into another workspace with 403', async () => {
    const ws = await setUp();
    const other = await makeSecondWorkspace(ws.orgKey);
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Stay');

    const single = await call('PATCH', `/items/${folder.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: other.rootFolderId } });
    const batch = await call('PATCH', '/items/move', { key: ws.workspaceKey, body: { parentFolderId: other.rootFolderId, items: [{ id: folder.id }] } });

    expect([single.status, batch.status]).toEqual([403, 403]);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Stay']);
  });

  it("refuses an organization key moving into another organization's folder with 403", async () => {
    const ws = await setUp();
    const stranger = await makeOrganization();
    const strangerRoot = (await workspaceOf(stranger.workspaceId)).rootFolderId;
    const folder = await makeFolder(ws.orgKey, ws.rootId, 'Ours');

    const response = await call('PATCH', `/items/${folder.id}/move`, { key: ws.orgKey, body: { parentFolderId: strangerRoot } });

    expect(response.status).toBe(403);
  });

  it('moves a folder tree into another workspace: every folder and markup below changes workspace, keeps its id and leaves the old markup list', async () => {
    const ws = await setUp();
    const other = await makeSecondWorkspace(ws.orgKey);
    const [top, inner] = await makeFolderChain(ws.orgKey, ws.rootId, ['Project', 'Assets']);
    const markups = [await ws.markup(top!.id, 'Top page'), await ws.markup(inner!.id, 'Inner page')];

    const response = await call('PATCH', `/items/${top!.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: top!.id, parentFolderId: other.rootFolderId, workspaceId: other.id });
    for (const id of [top!.id, inner!.id, ...ids(markups)]) expect((await getItem(id, true))?.workspaceId).toBe(other.id);
    expect(await ancestorsOf(ws.orgKey, inner!.id)).toEqual(['Root', 'Project']);
    expect(ids((await call('GET', `/items/${inner!.id}`, { key: ws.orgKey })).body.data.ancestors)[0]).toBe(other.rootFolderId);
    expect([...(await workspaceMarkupIds(ws.workspaceId))]).toEqual([]);
    expect([...(await workspaceMarkupIds(other.id))].sort()).toEqual(ids(markups).sort());
    expect((await call('GET', `/items/${inner!.id}`, { key: ws.workspaceKey })).status).toBe(403);
  });

  it("carries a moved markup's retained original into the new workspace", async () => {
    const ws = await setUp();
    const other = await makeSecondWorkspace(ws.orgKey);
    const markup = await makeMarkup({ workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: ws.rootId, hasRetainedOriginal: true });
    await makeRetainedOriginal({ markupId: markup.id, workspaceId: ws.workspaceId, organizationId: ws.organizationId });

    await call('PATCH', `/items/${markup.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });

    const original = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: originalKey(markup.id) }));
    expect(original.Item).toMatchObject({ workspaceId: other.id, GSI1PK: retainedOriginalsPartition(other.id) });
    const leftBehind = [];
    for await (const item of queryAll('GSI1', retainedOriginalsPartition(ws.workspaceId))) leftBehind.push(item);
    expect(leftBehind).toEqual([]);
  });
});

describe('Move rule 1 at scale: a cross-workspace move of a folder tree with 2000 markups', { timeout: 240_000 }, () => {
  it('moves every folder and markup of the tree into the other workspace', async () => {
    const ws = await setUp();
    const other = await makeSecondWorkspace(ws.orgKey);
    const top = await makeFolder(ws.orgKey, ws.rootId, 'Big');
    const branches = await Promise.all(['A', 'B', 'C', 'D'].map((name) => makeFolderChain(ws.orgKey, top.id, [name, `${name}-1`, `${name}-2`])));
    const folders = [top, ...branches.flat()];
    const perFolder = Math.ceil(2000 / folders.length);
    const markups = (
      await Promise.all(folders.map((folder) => makeMarkups(perFolder, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: folder.id })))
    ).flat();

    const started = performance.now();
    const response = await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });
    const elapsed = performance.now() - started;
    console.info(`cross-workspace move of a folder tree with ${markups.length} markups in ${folders.length} folders: ${Math.round(elapsed)} ms`);

    expect(response.status).toBe(200);
    expect((await workspaceMarkupIds(ws.workspaceId)).size).toBe(0);
    expect((await workspaceMarkupIds(other.id)).size).toBe(markups.length);
    const moved = await Promise.all(folders.map((folder) => getItem(folder.id, true)));
    for (const folder of moved as FolderRecord[]) {
      expect(folder.workspaceId).toBe(other.id);
      expect(folder.ancestorIds[0]).toBe(other.rootFolderId);
    }
  });
});

describe('Move rule 2: all sources of one batch belong to the same workspace, otherwise 400', () => {
  it('answers 400 and moves nothing when the sources span several workspaces', async () => {
    const ws = await setUp();
    const other = await makeSecondWorkspace(ws.orgKey);
    const mine = await makeFolder(ws.orgKey, ws.rootId, 'Mine');
    const theirs = await makeFolder(ws.orgKey, other.rootFolderId, 'Theirs');
    const destination = await makeFolder(ws.orgKey, ws.rootId, 'Destination');

    const response = await call('PATCH', '/items/move', {
      key: ws.orgKey,
      body: { parentFolderId: destination.id, items: [{ id: mine.id }, { id: theirs.id }] },
    });

    expect(response.status).toBe(400);
    expect(await childNames(ws.orgKey, destination.id)).toEqual([]);
    expect(await childNames(ws.orgKey, other.rootFolderId)).toEqual(['Theirs']);
  });
});

describe('Move rule 3: the workspace root cannot be moved; no move into a descendant of the source; no move beyond maximum depth', () => {
  it('refuses moving the root or archive folder with 422', async () => {
    const ws = await setUp();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');

    const root = await call('PATCH', `/items/${ws.rootId}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } });
    const archive = await call('PATCH', `/items/${ws.archiveId}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } });

    expect([root.status, archive.status]).toEqual([422, 422]);
  });

  it('refuses moving a folder into itself or its own descendant with 422', async () => {
    const ws = await setUp();
    const [top, , bottom] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Top', 'Middle', 'Bottom']);

    const intoItself = await call('PATCH', `/items/${top!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: top!.id } });
    const intoDescendant = await call('PATCH', `/items/${top!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: bottom!.id } });

    expect([intoItself.status, intoDescendant.status]).toEqual([422, 422]);
    expect(await ancestorsOf(ws.workspaceKey, bottom!.id)).toEqual(['Root', 'Top', 'Middle']);
  });

  it(`refuses a move that would nest the moved tree beyond ${MAX_FOLDER_DEPTH} levels with 422, and allows one that fits exactly`, async () => {
    const ws = await setUp();
    const deep = await makeFolderChain(ws.workspaceKey, ws.rootId, Array.from({ length: MAX_FOLDER_DEPTH - 1 }, (_, i) => `D${i + 1}`));
    const [tree] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Tree', 'Branch']);
    const fits = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Leaf']);

    const tooDeep = await call('PATCH', `/items/${tree!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: deep.at(-1)!.id } });
    const exact = await call('PATCH', `/items/${tree!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: deep.at(-2)!.id } });
    const leaf = await call('PATCH', `/items/${fits[0]!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: deep.at(-1)!.id } });

    expect(tooDeep.status).toBe(422);
    expect(tooDeep.body.detail).toContain(`at most ${MAX_FOLDER_DEPTH} levels`);
    expect([exact.status, leaf.status]).toEqual([200, 200]);
  });

  it('reports these rejections per item with statusCode 422 in a batch that answers 200', async () => {
    const ws = await setUp();
    const [top, , bottom] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Top', 'Middle', 'Bottom']);
    const movable = await ws.markup(ws.rootId, 'Page');

    const response = await call('PATCH', '/items/move', {
      key: ws.workspaceKey,
      body: { parentFolderId: bottom!.id, items: [{ id: ws.rootId }, { id: top!.id }, { id: movable.id }] },
    });

    expect(response.status).toBe(200);
    expect(ids(response.body.data.successes)).toEqual([movable.id]);
    expect(response.body.data.errors).toEqual([
      { itemId: ws.rootId, statusCode: 422, message: expect.stringContaining('root folder cannot be moved') },
      { itemId: top!.id, statusCode: 422, message: expect.stringContaining('into itself or into one of its own subfolders') },
    ]);
  });
});

describe('Move rule 4: a name clash at the destination uses fallbackName, else a numeric suffix', () => {
  it('numbers a moved folder whose name is taken, and uses fallbackName when given', async () => {
    const ws = await setUp();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    await makeFolder(ws.workspaceKey, destination.id, 'Assets');
    const [a, b] = await Promise.all(['A', 'B'].map((name) => makeFolder(ws.workspaceKey, ws.rootId, name)));
    const first = await makeFolder(ws.workspaceKey, a!.id, 'Assets');
    const second = await makeFolder(ws.workspaceKey, b!.id, 'assets');

    const numbered = await call('PATCH', `/items/${first.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } });
    const fallback = await call('PATCH', `/items/${second.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id, fallbackName: 'Old assets' } });

    expect(numbered.body.data.name).toBe('Assets (2)');
    expect(fallback.body.data.name).toBe('Old assets');
    expect(await childNames(ws.workspaceKey, destination.id)).toEqual(['Assets', 'Assets (2)', 'Old assets']);
  });

  it('gives several clashing folders of one batch distinct names', async () => {
    const ws = await setUp();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    await makeFolder(ws.workspaceKey, destination.id, 'Notes');
    const parents = await Promise.all(['A', 'B', 'C'].map((name) => makeFolder(ws.workspaceKey, ws.rootId, name)));
    const notes = await Promise.all(parents.map((parent) => makeFolder(ws.workspaceKey, parent.id, 'Notes')));

    const response = await call('PATCH', '/items/move', {
      key: ws.workspaceKey,
      body: { parentFolderId: destination.id, items: [{ id: notes[0]!.id }, { id: notes[1]!.id, fallbackName: 'B notes' }, { id: notes[2]!.id }] },
    });

    expect(names(response.body.data.successes)).toEqual(['Notes (2)', 'B notes', 'Notes (3)']);
  });

  it('keeps markup names as they are', async () => {
    const ws = await setUp();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    await ws.markup(destination.id, 'Page');
    const markup = await ws.markup(ws.rootId, 'Page');

    const response = await call('PATCH', `/items/${markup.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id, fallbackName: 'Other' } });

    expect(response.body.data.name).toBe('Page');
  });
});

describe('Move rule 5: the batch endpoint reports per-item failures in errors while returning 200', () => {
  it('moves what it can and reports unknown items with 404', async () => {
    const ws = await setUp();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    const markup = await ws.markup(ws.rootId, 'Page');

    const response = await call('PATCH', '/items/move', {
      key: ws.workspaceKey,
      body: { parentFolderId: destination.id, items: [{ id: missingId }, { id: markup.id }] },
    });

    expect(response.status).toBe(200);
    expect(response.body.data.successes).toHaveLength(1);
    expect(Object.keys(response.body.data.successes[0]).sort()).toEqual(FOLDER_ITEM_FIELDS);
    expect(response.body.data.errors).toEqual([{ itemId: missingId, statusCode: 404, message: expect.any(String) }]);
  });

  it('answers 400 for more than 50 items, none, or an id listed twice, and 404 for an unknown destination', async () => {
    const ws = await setUp();
    const markup = await ws.markup(ws.rootId);
    const move = (body: unknown) => call('PATCH', '/items/move', { key: ws.workspaceKey, body });
    const fiftyOne = Array.from({ length: 51 }, () => ({ id: markup.id }));

    const tooMany = await move({ parentFolderId: ws.rootId, items: fiftyOne });
    const none = await move({ parentFolderId: ws.rootId, items: [] });
    const twice = await move({ parentFolderId: ws.rootId, items: [{ id: markup.id }, { id: markup.id }] });
    const unknownDestination = await move({ parentFolderId: missingId, items: [{ id: markup.id }] });
    const markupDestination = await move({ parentFolderId: markup.id, items: [{ id: markup.id }] });

    expect([tooMany.status, none.status, twice.status]).toEqual([400, 400, 400]);
    expect(tooMany.body.errors[0].pointer).toBe('/body/items');
    expect([unknownDestination.status, markupDestination.status]).toEqual([404, 404]);
  });
});

describe('PATCH /items/:id/move (Item in a folder -> under the new parent)', () => {
  it('moves a folder keeping its id, rebases its descendants, and marks the destination active', async () => {
    const ws = await setUp();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    await makeFolder(ws.workspaceKey, ws.rootId, 'Newer');
    const [top, middle, bottom] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Top', 'Middle', 'Bottom']);
    const before = await call('GET', `/items/${top!.id}`, { key: ws.workspaceKey });

    const response = await call('PATCH', `/items/${top!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data).sort()).toEqual(FOLDER_ITEM_FIELDS);
    expect(response.body.data).toMatchObject({ id: top!.id, name: 'Top', parentFolderId: destination.id, workspaceId: ws.workspaceId });
    expect(response.body.data.modifiedAt).toBeGreaterThan(before.body.data.modifiedAt);
    expect(await ancestorsOf(ws.workspaceKey, bottom!.id)).toEqual(['Root', 'Destination', 'Top', 'Middle']);
    expect((await call('GET', `/items/${middle!.id}`, { key: ws.workspaceKey })).body.data.parentFolderId).toBe(top!.id);
    expect((await childNames(ws.workspaceKey, ws.rootId, 'activity'))[0]).toBe('Destination');
  });

  it('moves a markup into a folder and out of the archive', async () => {
    const ws = await setUp();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    const markup = await ws.markup(ws.archiveId, 'Archived page');

    const response = await call('PATCH', `/items/${markup.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: markup.id, type: 'markup', parentFolderId: destination.id });
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual([]);
  });

  it('answers 404 for an unknown item or destination, 403 for a viewer, 400 for malformed ids', async () => {
    const ws = await setUp();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Folder');
    const viewer = await makeMemberKey(ws.workspaceId, 'viewer');

    const unknownItem = await call('PATCH', `/items/${missingId}/move`, { key: ws.workspaceKey, body: { parentFolderId: ws.rootId } });
    const unknownDestination = await call('PATCH', `/items/${folder.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: missingId } });
    const asViewer = await call('PATCH', `/items/${folder.id}/move`, { key: viewer, body: { parentFolderId: ws.archiveId } });
    const malformed = await call('PATCH', '/items/nope/move', { key: ws.workspaceKey, body: { parentFolderId: 'nope' } });

    expect([unknownItem.status, unknownDestination.status, asViewer.status, malformed.status]).toEqual([404, 404, 403, 400]);
  });
});
