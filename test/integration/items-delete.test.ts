import { describe, expect, it } from 'vitest';
import { getItem } from '../../shared/db/items.js';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { call } from '../support/api.js';
import { makeRetainedOriginal } from '../support/fixtures.js';
import { childNames, ids, makeItemsWorkspace } from '../support/folder-items.js';
import { missingId } from '../support/ids.js';
import { makeFolder, makeFolderChain, makeMarkup, makeMarkups, makeMemberKey, workspaceMarkupIds } from '../support/items.js';

describe('DELETE /items/:id (a markup, or a folder with everything under it)', () => {
  it('deletes a markup: it is gone from reads and from the workspace markup list', async () => {
    const ws = await makeItemsWorkspace();
    const markup = await ws.markup(ws.rootId);

    const response = await call('DELETE', `/items/${markup.id}`, { key: ws.workspaceKey });

    expect(response.status).toBe(204);
    expect((await call('GET', `/items/${markup.id}`, { key: ws.workspaceKey })).status).toBe(404);
    expect((await workspaceMarkupIds(ws.workspaceId)).has(markup.id)).toBe(false);
  });

  it('deletes a folder with every folder and markup below it, leaving its siblings alone', async () => {
    const ws = await makeItemsWorkspace();
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
    const ws = await makeItemsWorkspace();
    const markup = await makeMarkup({
      workspaceId: ws.workspaceId,
      organizationId: ws.organizationId,
      parentFolderId: ws.rootId,
      hasRetainedOriginal: true,
      retainOriginal: true,
    });
    await makeRetainedOriginal({ markupId: markup.id, workspaceId: ws.workspaceId, organizationId: ws.organizationId, filesize: 4096 });

    await call('DELETE', `/items/${markup.id}`, { key: ws.workspaceKey });

    expect((await getStorageBreakdown(ws.organizationId)).originals).toBe(0);
  });

  it('refuses the root and archive folders with 422, contributors with 403, and answers 404 for an unknown id', async () => {
    const ws = await makeItemsWorkspace();
    const contributor = await makeMemberKey(ws.workspaceId, 'contributor');
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Keep');

    const root = await call('DELETE', `/items/${ws.rootId}`, { key: ws.workspaceKey });
    const archive = await call('DELETE', `/items/${ws.archiveId}`, { key: ws.orgKey });
    const asContributor = await call('DELETE', `/items/${folder.id}`, { key: contributor });
    const unknown = await call('DELETE', `/items/${missingId}`, { key: ws.workspaceKey });

    expect([root.status, archive.status, asContributor.status, unknown.status]).toEqual([422, 422, 403, 404]);
  });
});

describe(
  'DELETE /items/:id of a folder tree with 2000 markups (nothing left orphaned, within the API time limit)',
  { timeout: 240_000 },
  () => {
    it('removes every folder and markup of the tree', async () => {
      const ws = await makeItemsWorkspace();
      const top = await makeFolder(ws.workspaceKey, ws.rootId, 'Big');
      const branches = await Promise.all(
        ['A', 'B', 'C', 'D'].map((name) => makeFolderChain(ws.workspaceKey, top.id, [name, `${name}-1`, `${name}-2`])),
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
  },
);
