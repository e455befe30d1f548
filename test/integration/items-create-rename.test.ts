import { describe, expect, it } from 'vitest';
import { MAX_FOLDER_DEPTH } from '../../shared/db/items.js';
import { call } from '../support/api.js';
import { FOLDER_ITEM_FIELDS, childNames, makeItemsWorkspace } from '../support/folder-items.js';
import { missingId } from '../support/ids.js';
import { makeFolder, makeFolderChain, makeMemberKey } from '../support/items.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

describe('POST /items (create folder: 200 with { data: folder })', () => {
  it('creates a folder under the parent and answers 200 with it', async () => {
    const ws = await makeItemsWorkspace();

    const response = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name: '  Designs  ' } });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data).sort()).toEqual([...FOLDER_ITEM_FIELDS, 'folderCount', 'projectCount'].sort());
    expect(response.body.data).toMatchObject({ type: 'folder', name: 'Designs', parentFolderId: ws.rootId, workspaceId: ws.workspaceId });
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Designs']);
  });

  it('numbers a clashing name (case-insensitive) as "Name (2)", "Name (3)"; a markup of that name does not clash', async () => {
    const ws = await makeItemsWorkspace();
    await ws.markup(ws.rootId, 'Designs');
    const create = (name: string) => call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name } });

    const first = await create('Designs');
    const second = await create('designs');
    const third = await create('Designs');

    expect([first.body.data.name, second.body.data.name, third.body.data.name]).toEqual(['Designs', 'designs (2)', 'Designs (3)']);
  });

  it('uses fallbackName on a clash, and numbers the fallback when it clashes too', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const chain = await makeFolderChain(
      ws.workspaceKey,
      ws.rootId,
      Array.from({ length: MAX_FOLDER_DEPTH }, (_, i) => `L${i + 1}`),
    );

    const response = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: chain.at(-1)!.id, name: 'Too deep' } });

    expect(response.status).toBe(422);
    expect(response.body.detail).toContain(`at most ${MAX_FOLDER_DEPTH} levels`);
  });

  it('allows folders in the archive folder', async () => {
    const ws = await makeItemsWorkspace();

    const response = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.archiveId, name: 'Old work' } });

    expect(response.status).toBe(200);
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual(['Old work']);
  });

  it('marks activity on the parent folder', async () => {
    const ws = await makeItemsWorkspace();
    const older = await makeFolder(ws.workspaceKey, ws.rootId, 'older');
    await makeFolder(ws.workspaceKey, ws.rootId, 'newer');

    await makeFolder(ws.workspaceKey, older.id, 'inside older');

    expect(await childNames(ws.workspaceKey, ws.rootId, 'activity')).toEqual(['older', 'newer']);
  });

  it('answers 404 for an unknown parent or a markup parent, 403 outside the scope or for a viewer, 400 for a bad body', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'aaa');
    await makeFolder(ws.workspaceKey, ws.rootId, 'mmm');

    const response = await call('PATCH', `/items/${folder.id}`, { key: ws.workspaceKey, body: { name: 'zzz' } });

    expect(response.status).toBe(204);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['mmm', 'zzz']);
  });

  it('renames a markup', async () => {
    const ws = await makeItemsWorkspace();
    const markup = await ws.markup(ws.rootId, 'Before');

    const response = await call('PATCH', `/items/${markup.id}`, { key: ws.workspaceKey, body: { name: 'After' } });
    const read = await call('GET', `/items/${markup.id}`, { key: ws.workspaceKey });

    expect(response.status).toBe(204);
    expect(read.body.data.name).toBe('After');
  });

  it('refuses renaming the root or archive folder with 422 and taking a sibling folder name with 409', async () => {
    const ws = await makeItemsWorkspace();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'One');
    await makeFolder(ws.workspaceKey, ws.rootId, 'Two');

    const root = await call('PATCH', `/items/${ws.rootId}`, { key: ws.workspaceKey, body: { name: 'X' } });
    const archive = await call('PATCH', `/items/${ws.archiveId}`, { key: ws.workspaceKey, body: { name: 'X' } });
    const clash = await call('PATCH', `/items/${folder.id}`, { key: ws.workspaceKey, body: { name: 'two' } });
    const ownCase = await call('PATCH', `/items/${folder.id}`, { key: ws.workspaceKey, body: { name: 'ONE' } });

    expect([root.status, archive.status, clash.status, ownCase.status]).toEqual([422, 422, 409, 204]);
  });

  it('answers 404 for an unknown id, 403 outside the scope or for a viewer, 400 for an empty name', async () => {
    const ws = await makeItemsWorkspace();
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
