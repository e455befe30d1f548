import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getItem, MAX_FOLDER_DEPTH, type FolderRecord } from '../../shared/db/items.js';
import { originalKey, retainedOriginalsPartition } from '../../shared/db/originals.js';
import { queryAll } from '../../shared/db/core/paging.js';
import { call, makeOrganization } from '../support/api.js';
import { makeRetainedOriginal } from '../support/fixtures.js';
import { FOLDER_ITEM_FIELDS, ancestorsOf, childNames, ids, makeItemsWorkspace, names } from '../support/folder-items.js';
import { missingId } from '../support/ids.js';
import { makeFolder, makeFolderChain, makeMarkup, makeMarkups, makeMemberKey, workspaceMarkupIds, workspaceOf } from '../support/items.js';
import { moveFinished } from '../support/moves.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

describe('Move rule 1: workspace keys move only inside their workspace; organization keys may move to another workspace of the organization', () => {
  it('refuses a workspace key moving into another workspace with 403', async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Stay');

    const single = await call('PATCH', `/items/${folder.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: other.rootFolderId } });
    const batch = await call('PATCH', '/items/move', {
      key: ws.workspaceKey,
      body: { parentFolderId: other.rootFolderId, items: [{ id: folder.id }] },
    });

    expect([single.status, batch.status]).toEqual([403, 403]);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual(['Stay']);
  });

  it("refuses an organization key moving into another organization's folder with 403", async () => {
    const ws = await makeItemsWorkspace();
    const stranger = await makeOrganization();
    const strangerRoot = (await workspaceOf(stranger.workspaceId)).rootFolderId;
    const folder = await makeFolder(ws.orgKey, ws.rootId, 'Ours');

    const response = await call('PATCH', `/items/${folder.id}/move`, { key: ws.orgKey, body: { parentFolderId: strangerRoot } });

    expect(response.status).toBe(403);
  });

  it('moves a folder tree into another workspace: every folder and markup below changes workspace, keeps its id and leaves the old markup list', async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const [top, inner] = await makeFolderChain(ws.orgKey, ws.rootId, ['Project', 'Assets']);
    const markups = [await ws.markup(top!.id, 'Top page'), await ws.markup(inner!.id, 'Inner page')];

    const response = await call('PATCH', `/items/${top!.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: top!.id, parentFolderId: other.rootFolderId, workspaceId: other.id });
    // From the response on (the move worker carries the tree after it): the source's key is refused.
    expect((await call('GET', `/items/${inner!.id}`, { key: ws.workspaceKey })).status).toBe(403);
    expect((await moveFinished(top!.id))?.state).toBe('done');
    for (const id of [top!.id, inner!.id, ...ids(markups)]) expect((await getItem(id, true))?.workspaceId).toBe(other.id);
    expect(await ancestorsOf(ws.orgKey, inner!.id)).toEqual(['Root', 'Project']);
    expect(ids((await call('GET', `/items/${inner!.id}`, { key: ws.orgKey })).body.data.ancestors)[0]).toBe(other.rootFolderId);
    expect([...(await workspaceMarkupIds(ws.workspaceId))]).toEqual([]);
    expect([...(await workspaceMarkupIds(other.id))].sort()).toEqual(ids(markups).sort());
    expect((await call('GET', `/items/${inner!.id}`, { key: ws.workspaceKey })).status).toBe(403);
  });

  it("carries a moved markup's retained original into the new workspace", async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const markup = await makeMarkup({
      workspaceId: ws.workspaceId,
      organizationId: ws.organizationId,
      parentFolderId: ws.rootId,
      hasRetainedOriginal: true,
    });
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
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const top = await makeFolder(ws.orgKey, ws.rootId, 'Big');
    const branches = await Promise.all(
      ['A', 'B', 'C', 'D'].map((name) => makeFolderChain(ws.orgKey, top.id, [name, `${name}-1`, `${name}-2`])),
    );
    const folders = [top, ...branches.flat()];
    const perFolder = Math.ceil(2000 / folders.length);
    const markups = (
      await Promise.all(
        folders.map((folder) =>
          makeMarkups(perFolder, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: folder.id }),
        ),
      )
    ).flat();

    const started = performance.now();
    const response = await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });
    const elapsed = performance.now() - started;
    console.info(
      `cross-workspace move of a folder tree with ${markups.length} markups in ${folders.length} folders: ${Math.round(elapsed)} ms`,
    );

    expect(response.status).toBe(200);
    // The response comes before the tree is carried (by the move worker); it is done soon after.
    expect((await moveFinished(top.id, 120_000))?.state).toBe('done');
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
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');

    const root = await call('PATCH', `/items/${ws.rootId}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } });
    const archive = await call('PATCH', `/items/${ws.archiveId}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } });

    expect([root.status, archive.status]).toEqual([422, 422]);
  });

  it('refuses moving a folder into itself or its own descendant with 422', async () => {
    const ws = await makeItemsWorkspace();
    const [top, , bottom] = await makeFolderChain(ws.workspaceKey, ws.rootId, ['Top', 'Middle', 'Bottom']);

    const intoItself = await call('PATCH', `/items/${top!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: top!.id } });
    const intoDescendant = await call('PATCH', `/items/${top!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: bottom!.id } });

    expect([intoItself.status, intoDescendant.status]).toEqual([422, 422]);
    expect(await ancestorsOf(ws.workspaceKey, bottom!.id)).toEqual(['Root', 'Top', 'Middle']);
  });

  it(`refuses a move that would nest the moved tree beyond ${MAX_FOLDER_DEPTH} levels with 422, and allows one that fits exactly`, async () => {
    const ws = await makeItemsWorkspace();
    const deep = await makeFolderChain(
      ws.workspaceKey,
      ws.rootId,
      Array.from({ length: MAX_FOLDER_DEPTH - 1 }, (_, i) => `D${i + 1}`),
    );
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
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    await makeFolder(ws.workspaceKey, destination.id, 'Assets');
    const [a, b] = await Promise.all(['A', 'B'].map((name) => makeFolder(ws.workspaceKey, ws.rootId, name)));
    const first = await makeFolder(ws.workspaceKey, a!.id, 'Assets');
    const second = await makeFolder(ws.workspaceKey, b!.id, 'assets');

    const numbered = await call('PATCH', `/items/${first.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } });
    const fallback = await call('PATCH', `/items/${second.id}/move`, {
      key: ws.workspaceKey,
      body: { parentFolderId: destination.id, fallbackName: 'Old assets' },
    });

    expect(numbered.body.data.name).toBe('Assets (2)');
    expect(fallback.body.data.name).toBe('Old assets');
    expect(await childNames(ws.workspaceKey, destination.id)).toEqual(['Assets', 'Assets (2)', 'Old assets']);
  });

  it('gives several clashing folders of one batch distinct names', async () => {
    const ws = await makeItemsWorkspace();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    await makeFolder(ws.workspaceKey, destination.id, 'Notes');
    const parents = await Promise.all(['A', 'B', 'C'].map((name) => makeFolder(ws.workspaceKey, ws.rootId, name)));
    const notes = await Promise.all(parents.map((parent) => makeFolder(ws.workspaceKey, parent.id, 'Notes')));

    const response = await call('PATCH', '/items/move', {
      key: ws.workspaceKey,
      body: {
        parentFolderId: destination.id,
        items: [{ id: notes[0]!.id }, { id: notes[1]!.id, fallbackName: 'B notes' }, { id: notes[2]!.id }],
      },
    });

    expect(names(response.body.data.successes)).toEqual(['Notes (2)', 'B notes', 'Notes (3)']);
  });

  it('keeps markup names as they are', async () => {
    const ws = await makeItemsWorkspace();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    await ws.markup(destination.id, 'Page');
    const markup = await ws.markup(ws.rootId, 'Page');

    const response = await call('PATCH', `/items/${markup.id}/move`, {
      key: ws.workspaceKey,
      body: { parentFolderId: destination.id, fallbackName: 'Other' },
    });

    expect(response.body.data.name).toBe('Page');
  });
});

describe('Move rule 5: the batch endpoint reports per-item failures in errors while returning 200', () => {
  it('moves what it can and reports unknown items with 404', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const destination = await makeFolder(ws.workspaceKey, ws.rootId, 'Destination');
    const markup = await ws.markup(ws.archiveId, 'Archived page');

    const response = await call('PATCH', `/items/${markup.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: markup.id, type: 'markup', parentFolderId: destination.id });
    expect(await childNames(ws.workspaceKey, ws.archiveId)).toEqual([]);
  });

  it('answers 404 for an unknown item or destination, 403 for a viewer, 400 for malformed ids', async () => {
    const ws = await makeItemsWorkspace();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Folder');
    const viewer = await makeMemberKey(ws.workspaceId, 'viewer');

    const unknownItem = await call('PATCH', `/items/${missingId}/move`, { key: ws.workspaceKey, body: { parentFolderId: ws.rootId } });
    const unknownDestination = await call('PATCH', `/items/${folder.id}/move`, {
      key: ws.workspaceKey,
      body: { parentFolderId: missingId },
    });
    const asViewer = await call('PATCH', `/items/${folder.id}/move`, { key: viewer, body: { parentFolderId: ws.archiveId } });
    const malformed = await call('PATCH', '/items/nope/move', { key: ws.workspaceKey, body: { parentFolderId: 'nope' } });

    expect([unknownItem.status, unknownDestination.status, asViewer.status, malformed.status]).toEqual([404, 404, 403, 400]);
  });
});
