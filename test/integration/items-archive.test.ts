import { describe, expect, it } from 'vitest';
import { call } from '../support/api.js';
import { ancestorsOf, childNames, makeItemsWorkspace } from '../support/folder-items.js';
import { missingId } from '../support/ids.js';
import { makeFolder, makeFolderChain } from '../support/items.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

describe('PATCH /items/archive (Item active -> in the workspace archive folder)', () => {
  it('moves listed folders and markups into the archive folder', async () => {
    const ws = await makeItemsWorkspace();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Done');
    const markup = await ws.markup(ws.rootId, 'Shipped');

    const response = await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [folder.id, markup.id] } });

    expect(response.status).toBe(204);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual(['Done', 'Shipped']);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual([]);
  });

  it('with withPath=1 re-creates the folder path under the archive, reusing folders with the same name', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const first = await makeFolder(ws.workspaceKey, ws.rootId, 'Sprint');
    await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [first.id] } });
    const second = await makeFolder(ws.workspaceKey, ws.rootId, 'Sprint');

    await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [second.id] } });

    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual(['Sprint', 'Sprint (2)']);
  });

  it('answers 404 for the whole request when one id is unknown, and changes nothing', async () => {
    const ws = await makeItemsWorkspace();
    const markup = await ws.markup(ws.rootId, 'Stays');

    const response = await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [markup.id, missingId] } });

    expect(response.status).toBe(404);
    expect(response.body.detail).toContain(missingId);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Stays']);
  });

  it('refuses the root or archive folder with 422, out-of-scope items with 403, and bad lists with 400; nothing changes', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const [, drafts] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Client', 'Drafts']);
    const markup = await ws.markup(drafts!.id, 'Page');
    await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [markup.id] } });

    const response = await call('PATCH', '/items/restore', { key: ws.workspaceKey, body: { folderItemIds: [markup.id] } });

    expect(response.status).toBe(204);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Client', 'Page']);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual([]);
  });

  it('with withPath=1 puts an item back under the path it was archived from, re-created when it was deleted', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Live');
    const inner = await ws.markup(folder.id, 'Inner');

    const response = await call('PATCH', '/items/restore', { key: ws.workspaceKey, body: { folderItemIds: [inner.id] } });

    expect(response.status).toBe(204);
    expect(await childNames(ws.workspaceKey, folder.id)).toEqual(['Inner']);
  });

  it('answers 404 for the whole request when one id is unknown, and restores nothing', async () => {
    const ws = await makeItemsWorkspace();
    const markup = await ws.markup(ws.rootId, 'Archived');
    await call('PATCH', '/items/archive', { key: ws.workspaceKey, body: { folderItemIds: [markup.id] } });

    const response = await call('PATCH', '/items/restore', { key: ws.workspaceKey, body: { folderItemIds: [markup.id, missingId] } });

    expect(response.status).toBe(404);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual(['Archived']);
  });
});
