import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { armFault } from '../../shared/db/core/faults.js';
import { getItem, type FolderRecord } from '../../shared/db/items.js';
import { MAX_CARRIED_ITEMS } from '../../shared/domain/items/move.js';
import { MOVE_BATCH_ITEMS } from '../../shared/domain/items/pending-moves.js';
import { originalKey, retainedOriginalsPartition } from '../../shared/db/originals.js';
import { queryAll } from '../../shared/db/core/paging.js';
import { call } from '../support/api.js';
import { makeRetainedOriginal } from '../support/fixtures.js';
import { ancestorsOf, makeItemsWorkspace } from '../support/folder-items.js';
import { makeFolderChain, makeMarkup, makeMarkups, workspaceMarkupIds } from '../support/items.js';
import { backdateMove, moveFinished } from '../support/moves.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

async function originalOf(markupId: string): Promise<Record<string, unknown> | undefined> {
  return (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: originalKey(markupId), ConsistentRead: true }))).Item;
}

async function retainedIn(workspaceId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const item of queryAll('GSI1', retainedOriginalsPartition(workspaceId))) ids.push(item.markupId as string);
  return ids;
}

describe('A cross-workspace move interrupted after its commit completes when the request is repeated', { timeout: 120_000 }, () => {
  it('carries the folder, its subfolders, markups and retained originals into the new workspace on retry', async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const [top, inner] = await makeFolderChain(ws.orgKey, ws.rootId, ['Project', 'Assets']);
    const plain = await ws.markup(top!.id, 'Top page');
    const withOriginal = await makeMarkup({
      workspaceId: ws.workspaceId,
      organizationId: ws.organizationId,
      parentFolderId: inner!.id,
      hasRetainedOriginal: true,
    });
    await makeRetainedOriginal({ markupId: withOriginal.id, workspaceId: ws.workspaceId, organizationId: ws.organizationId });
    const move = () => call('PATCH', `/items/${top!.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });

    await armFault('after-move-commit', top!.id);
    const interrupted = await move();
    const retried = await move();

    expect(interrupted.status).toBe(500);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.data).toMatchObject({ id: top!.id, parentFolderId: other.rootFolderId, workspaceId: other.id });
    // The move was recorded by the interrupted request; the retry queued its lost job again.
    expect((await moveFinished(top!.id))?.state).toBe('done');
    for (const id of [top!.id, inner!.id, plain.id, withOriginal.id]) expect((await getItem(id, true))?.workspaceId).toBe(other.id);
    expect(((await getItem(inner!.id, true)) as FolderRecord).ancestorIds).toEqual([other.rootFolderId, top!.id]);
    expect(await ancestorsOf(ws.orgKey, inner!.id)).toEqual(['Root', 'Project']);
    expect([...(await workspaceMarkupIds(ws.workspaceId))]).toEqual([]);
    expect([...(await workspaceMarkupIds(other.id))].sort()).toEqual([plain.id, withOriginal.id].sort());
    expect(await originalOf(withOriginal.id)).toMatchObject({ workspaceId: other.id, GSI1PK: retainedOriginalsPartition(other.id) });
    expect(await retainedIn(ws.workspaceId)).toEqual([]);
    expect((await getItem(top!.id, true)) as unknown as Record<string, unknown>).not.toHaveProperty('pendingMove');
  });

  it('finishes the interrupted move when the moved folder is read after its job stalled', async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const [top, inner] = await makeFolderChain(ws.orgKey, ws.rootId, ['Project', 'Assets']);
    const markup = await ws.markup(inner!.id, 'Inner page');

    await armFault('after-move-commit', top!.id);
    const interrupted = await call('PATCH', `/items/${top!.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });
    await backdateMove(top!.id);
    const read = await call('GET', `/items/${top!.id}`, { key: ws.orgKey });

    expect([interrupted.status, read.status]).toEqual([500, 200]);
    expect((await moveFinished(top!.id))?.state).toBe('done');
    for (const id of [inner!.id, markup.id]) expect((await getItem(id, true))?.workspaceId).toBe(other.id);
  });
});

describe('POST /markups/bulk/move into another workspace, interrupted after its commit', () => {
  it('moves the retained originals along when the request is repeated', async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const markups = await Promise.all(
      [0, 1].map(() =>
        makeMarkup({
          workspaceId: ws.workspaceId,
          organizationId: ws.organizationId,
          parentFolderId: ws.rootId,
          hasRetainedOriginal: true,
        }),
      ),
    );
    for (const markup of markups)
      await makeRetainedOriginal({ markupId: markup.id, workspaceId: ws.workspaceId, organizationId: ws.organizationId });
    const move = () =>
      call('POST', '/markups/bulk/move', {
        key: ws.orgKey,
        body: { markupIds: markups.map((m) => m.id), targetFolderId: other.rootFolderId },
      });

    await armFault('before-original-move', markups[0]!.id);
    const interrupted = await move();
    const retried = await move();

    expect([interrupted.status, retried.status]).toEqual([500, 204]);
    for (const markup of markups) {
      expect((await getItem(markup.id, true))?.workspaceId).toBe(other.id);
      expect(await originalOf(markup.id)).toMatchObject({ workspaceId: other.id, GSI1PK: retainedOriginalsPartition(other.id) });
    }
    expect(await retainedIn(ws.workspaceId)).toEqual([]);
  });
});

describe(
  `A cross-workspace move of more than ${MAX_CARRIED_ITEMS} markups (the bound of a move within a workspace)`,
  { timeout: 240_000 },
  () => {
    it('answers at once and is carried into the other workspace in the background, in batches', async () => {
      const ws = await makeItemsWorkspace();
      const other = await makeSecondWorkspace(ws.orgKey);
      const [top] = await makeFolderChain(ws.orgKey, ws.rootId, ['Huge']);
      await makeMarkups(MAX_CARRIED_ITEMS + 1, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: top!.id });

      const response = await call('PATCH', `/items/${top!.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });

      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const move = await moveFinished(top!.id, 180_000);
      expect(move).toMatchObject({ state: 'done', carriedMarkups: MAX_CARRIED_ITEMS + 1 });
      expect(move!.batches).toBeGreaterThanOrEqual(Math.ceil((MAX_CARRIED_ITEMS + 1) / MOVE_BATCH_ITEMS));
      expect((await workspaceMarkupIds(ws.workspaceId)).size).toBe(0);
      expect((await workspaceMarkupIds(other.id)).size).toBe(MAX_CARRIED_ITEMS + 1);
    });
  },
);
