import { describe, expect, it } from 'vitest';
import { call, makeOrganization } from '../support/api.js';
import { FOLDER_ITEM_FIELDS, childNames, ids, makeItemsWorkspace } from '../support/folder-items.js';
import { missingId } from '../support/ids.js';
import { listAllPages, makeFolder, makeFolderChain, makeMarkups, makeMemberKey } from '../support/items.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

describe('GET /items/:id (Folder items: a folder read returns the folder with its ancestors; a markup read returns the markup)', () => {
  it('returns a folder with the folder-item fields and its ancestors, root first', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();

    const response = await call('GET', `/items/${ws.rootId}`, { key: ws.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: ws.rootId, parentFolderId: null, ancestors: [] });
  });

  it('returns a markup in the Markup shape (ISO times, markup scopes)', async () => {
    const ws = await makeItemsWorkspace();
    const markup = await ws.markup(ws.rootId, 'Home page');

    const response = await call('GET', `/items/${markup.id}`, { key: ws.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      id: markup.id,
      type: 'webpage',
      name: 'Home page',
      url: 'https://example.com/',
      isReady: true,
    });
    expect(response.body.data.createdAt).toBe(new Date(markup.createdAt).toISOString());
    expect(response.body.data.scopes).toContain('view-project');
  });

  it('answers 404 for an unknown id and 400 for an id that is not a UUID', async () => {
    const ws = await makeItemsWorkspace();

    const missing = await call('GET', `/items/${missingId}`, { key: ws.workspaceKey });
    const malformed = await call('GET', '/items/not-a-uuid', { key: ws.workspaceKey });

    expect(missing.status).toBe(404);
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].pointer).toBe('/params/id');
  });

  it("refuses a workspace key on another workspace's item and an organization key on another organization's item with 403", async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const stranger = await makeOrganization();

    const otherWorkspace = await call('GET', `/items/${other.rootFolderId}`, { key: ws.workspaceKey });
    const otherOrganization = await call('GET', `/items/${ws.rootId}`, { key: stranger.orgKey });
    const sameOrganization = await call('GET', `/items/${other.rootFolderId}`, { key: ws.orgKey });

    expect(otherWorkspace.status).toBe(403);
    expect(otherOrganization.status).toBe(403);
    expect(sameOrganization.status).toBe(200);
  });

  it('gives each caller scopes from its role: viewers view, contributors edit, admins and owners delete', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    await makeFolder(ws.workspaceKey, ws.rootId, 'beta');
    await ws.markup(ws.rootId, 'Alpha page');
    await makeFolder(ws.workspaceKey, ws.rootId, 'Gamma');

    const response = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data.items.map((item: { name: string; type: string }) => [item.name, item.type])).toEqual([
      ['Alpha page', 'markup'],
      ['beta', 'folder'],
      ['Gamma', 'folder'],
    ]);
    // A webpage markup: the folder-item fields plus markupUrl and url, which tell markups from folders, and its card's extension fields.
    expect(Object.keys(response.body.data.items[0]).sort()).toEqual(
      [...FOLDER_ITEM_FIELDS, 'markupUrl', 'url', 'markupType', 'thumbnailUrl', 'activeThreads', 'unreadThreads', 'isReady'].sort(),
    );
    expect(response.body.data).toMatchObject({ hasMore: false, nextCursor: null, prevCursor: null });
  });

  it('orders by za, by newest first (created) and by most recent activity first (activity)', async () => {
    const ws = await makeItemsWorkspace();
    const first = await makeFolder(ws.workspaceKey, ws.rootId, 'first');
    await makeFolder(ws.workspaceKey, ws.rootId, 'second');
    await makeFolder(ws.workspaceKey, ws.rootId, 'third');
    await makeFolder(ws.workspaceKey, first.id, 'child of first');

    expect(await childNames(ws.workspaceKey, ws.rootId, 'za')).toEqual(['third', 'second', 'first']);
    expect(await childNames(ws.workspaceKey, ws.rootId, 'created')).toEqual(['third', 'second', 'first']);
    expect(await childNames(ws.workspaceKey, ws.rootId, 'activity')).toEqual(['first', 'third', 'second']);
  });

  it('follows nextCursor to the end visiting each child exactly once in every order, and since=<prevCursor> goes back', async () => {
    const ws = await makeItemsWorkspace();
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
    const second = await call('GET', `/items/${ws.rootId}/items`, {
      key: ws.workspaceKey,
      query: { order: 'created', limit: 5, before: first.body.data.nextCursor },
    });
    const back = await call('GET', `/items/${ws.rootId}/items`, {
      key: ws.workspaceKey,
      query: { order: 'created', limit: 5, since: second.body.data.prevCursor },
    });

    expect(second.body.data.prevCursor).toEqual(expect.any(String));
    expect(ids(back.body.data.items)).toEqual(ids(first.body.data.items));
  });

  it('answers page N as the children after the first (N-1)*limit, with working cursors, and an empty page past the end', async () => {
    const ws = await makeItemsWorkspace();
    await makeMarkups(12, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: ws.rootId });
    const all = (await listAllPages(ws.workspaceKey, ws.rootId, { order: 'created', limit: 100 })).flat();

    const third = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'created', limit: 5, page: 3 } });
    const second = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'created', limit: 5, page: 2 } });
    const back = await call('GET', `/items/${ws.rootId}/items`, {
      key: ws.workspaceKey,
      query: { order: 'created', limit: 5, since: second.body.data.prevCursor },
    });
    const beyond = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { limit: 5, page: 4 } });

    expect(ids(third.body.data.items)).toEqual(ids(all.slice(10, 12)));
    expect(third.body.data.hasMore).toBe(false);
    expect(ids(second.body.data.items)).toEqual(ids(all.slice(5, 10)));
    expect(second.body.data.hasMore).toBe(true);
    expect(ids(back.body.data.items)).toEqual(ids(all.slice(0, 5)));
    expect(beyond.body.data).toMatchObject({ items: [], hasMore: false, nextCursor: null });
  });

  it('accepts ttl in seconds and answers 400 for a bad order, limit, page, ttl, or page with a cursor', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const other = await makeFolder(ws.workspaceKey, ws.rootId, 'Other');
    await makeMarkups(3, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: ws.rootId });
    const page = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'az', limit: 1 } });
    const cursor: string = page.body.data.nextCursor;

    const tampered = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'az', before: `${cursor}x` } });
    const otherOrder = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey, query: { order: 'za', before: cursor } });
    const otherFolder = await call('GET', `/items/${other.id}/items`, { key: ws.workspaceKey, query: { order: 'az', before: cursor } });

    expect([tampered.status, otherOrder.status, otherFolder.status]).toEqual([400, 400, 400]);
  });

  it('answers 404 for a markup id or an unknown id, and 403 outside the key scope', async () => {
    const ws = await makeItemsWorkspace();
    const markup = await ws.markup(ws.rootId);
    const other = await makeSecondWorkspace(ws.orgKey);

    const ofMarkup = await call('GET', `/items/${markup.id}/items`, { key: ws.workspaceKey });
    const unknown = await call('GET', `/items/${missingId}/items`, { key: ws.workspaceKey });
    const outside = await call('GET', `/items/${other.rootFolderId}/items`, { key: ws.workspaceKey });

    expect([ofMarkup.status, unknown.status, outside.status]).toEqual([404, 404, 403]);
  });
});
