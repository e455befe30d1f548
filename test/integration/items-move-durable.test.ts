import { describe, expect, it } from 'vitest';
import { handler as sweep } from '../../functions/pending-work-sweep/handler.js';
import { armFault } from '../../shared/db/core/faults.js';
import { getItem } from '../../shared/db/items.js';
import { getMove } from '../../shared/db/moves.js';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { carryMoveBatch, MOVE_BATCH_ITEMS, requeuePendingMoves } from '../../shared/domain/items/pending-moves.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call } from '../support/api.js';
import { makeItemsWorkspace } from '../support/folder-items.js';
import { makeFolderChain, makeMarkups, workspaceMarkupIds } from '../support/items.js';
import { eventually } from '../support/polling.js';
import { backdateMove, moveFinished } from '../support/moves.js';
import { threadBody } from '../support/threads.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

/** A tree of folders (a chain with a side branch) holding `perFolder` markups each, in the items workspace `ws`. */
async function makeTree(ws: Awaited<ReturnType<typeof makeItemsWorkspace>>, perFolder: number) {
  const chain = await makeFolderChain(ws.orgKey, ws.rootId, ['Project', 'Assets', 'Deep']);
  const [side] = await makeFolderChain(ws.orgKey, chain[0]!.id, ['Side']);
  const folders = [...chain, side!];
  const markups = (
    await Promise.all(
      folders.map((folder) =>
        makeMarkups(perFolder, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: folder.id }),
      ),
    )
  ).flat();
  return { top: chain[0]!, folders, markups };
}

describe('A folder moved into another workspace answers to the destination from the response on', { timeout: 120_000 }, () => {
  it("refuses the source's key and serves the destination's on every item of the tree while its job is lost, then the recovery finishes it", async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const otherKey = (await createWorkspaceKey(other.id)).apiKey;
    const { top, folders, markups } = await makeTree(ws, 3);

    // The job is lost between the commit and its enqueue: nothing carries the tree until a recovery queues it again.
    await armFault('after-move-commit', top.id);
    const move = await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });
    expect(move.status).toBe(500);
    expect(await getMove(top.id)).toMatchObject({ state: 'carrying', fromWorkspaceId: ws.workspaceId, toWorkspaceId: other.id });

    // The source's own lists no longer show them, although the worker has not carried them yet.
    const movedIds = new Set(markups.map((markup) => markup.id));
    const listedInSource = await call('GET', '/markups', { key: ws.workspaceKey, query: { limit: 100 } });
    const foundInSource = await call('GET', '/markups/search', { key: ws.workspaceKey, query: { query: 'Page', limit: 100 } });
    expect([listedInSource.status, foundInSource.status]).toEqual([200, 200]);
    expect(listedInSource.body.data.data.filter((markup: { id: string }) => movedIds.has(markup.id))).toEqual([]);
    expect(foundInSource.body.data.data.filter((markup: { id: string }) => movedIds.has(markup.id))).toEqual([]);
    // The markup routes first: a read of the tree through the items routes used to finish the move in the request.
    for (const markup of markups) {
      expect(
        (await call('POST', `/markups/${markup.id}`, { key: ws.workspaceKey, body: { name: 'Taken back' } })).status,
        `rename of ${markup.id}`,
      ).toBe(403);
      expect((await call('POST', '/threads', { key: ws.workspaceKey, body: threadBody(markup) })).status, `thread on ${markup.id}`).toBe(
        403,
      );
      expect((await call('GET', `/markups/${markup.id}`, { key: ws.workspaceKey })).status).toBe(403);
    }
    for (const item of [...folders, ...markups]) {
      const asSource = await call('GET', `/items/${item.id}`, { key: ws.workspaceKey });
      expect(asSource.status, `${item.id}: ${JSON.stringify(asSource.body)}`).toBe(403);
    }
    const [renamed, commented] = [markups.at(-1)!, markups.at(-2)!];
    expect((await call('POST', `/markups/${renamed.id}`, { key: otherKey, body: { name: 'Renamed in B' } })).status).toBe(200);
    expect((await call('POST', '/threads', { key: otherKey, body: threadBody(commented) })).status).toBe(200);
    const listed = await call('GET', `/items/${folders[1]!.id}/items`, { key: otherKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data.items.every((item: { workspaceId: string }) => item.workspaceId === other.id)).toBe(true);

    // What the local stack does at start: queue the recorded move again (on a loaded machine a read may
    // already have queued it, 10 s after the move stalled).
    await requeuePendingMoves();
    expect((await moveFinished(top.id))?.state).toBe('done');
    for (const item of [...folders, ...markups]) expect((await getItem(item.id, true))?.workspaceId).toBe(other.id);
    expect((await workspaceMarkupIds(ws.workspaceId)).size).toBe(0);
    expect([...(await workspaceMarkupIds(other.id))].sort()).toEqual(markups.map((markup) => markup.id).sort());
    expect((await getWorkspace(ws.workspaceId, true))?.movesOut).toBeUndefined();
    expect((await getItem(top.id, true))?.pendingMoveFrom).toBeUndefined();
    const counts = await call('GET', `/items/${top.id}/items`, { key: otherKey });
    const assets = counts.body.data.items.find((item: { id: string }) => item.id === folders[1]!.id);
    expect(assets).toMatchObject({ folderCount: 1, projectCount: 3 });
    expect((await call('GET', `/markups/${renamed.id}`, { key: otherKey })).body.data.name).toBe('Renamed in B');
  });

  it('is finished by the scheduled pending-work sweep when its job was lost and nobody reads the tree', async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const { top, folders, markups } = await makeTree(ws, 2);
    await armFault('after-move-commit', top.id);
    expect((await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } })).status).toBe(
      500,
    );

    // No batch for a minute and no read of the tree: only the schedule can find it.
    await backdateMove(top.id);
    const swept = await sweep({});

    expect(swept.moves).toBeGreaterThanOrEqual(1);
    expect((await moveFinished(top.id))?.state).toBe('done');
    for (const item of [...folders, ...markups]) expect((await getItem(item.id, true))?.workspaceId).toBe(other.id);
  });

  it('takes no move of a folder above a tree still being carried (409), in its destination or anywhere, until the worker is done', async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const third = await makeSecondWorkspace(ws.orgKey);
    const { top, markups } = await makeTree(ws, 2);
    const [holder] = await makeFolderChain(ws.orgKey, other.rootFolderId, ['Holder']);
    const [besides] = await makeFolderChain(ws.orgKey, other.rootFolderId, ['Besides']);
    await armFault('after-move-commit', top.id);
    expect((await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: holder!.id } })).status).toBe(500);

    const intoThird = await call('PATCH', `/items/${holder!.id}/move`, { key: ws.orgKey, body: { parentFolderId: third.rootFolderId } });
    const withinDestination = await call('PATCH', `/items/${holder!.id}/move`, { key: ws.orgKey, body: { parentFolderId: besides!.id } });

    expect([intoThird.status, withinDestination.status]).toEqual([409, 409]);
    expect(intoThird.body.detail).toContain(top.id);
    // The source's key is still refused every markup of the carried tree.
    for (const markup of markups) expect((await call('GET', `/markups/${markup.id}`, { key: ws.workspaceKey })).status).toBe(403);
    await requeuePendingMoves();
    expect((await moveFinished(top.id))?.state).toBe('done');
    expect(
      (await call('PATCH', `/items/${holder!.id}/move`, { key: ws.orgKey, body: { parentFolderId: third.rootFolderId } })).status,
    ).toBe(200);
  });

  it('takes no other move of the folder, into its tree or out of it while it is carried (409), and answers a repeat of the same move with the folder', async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const { top, folders } = await makeTree(ws, 1);
    await armFault('after-move-commit', top.id);
    await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });

    const elsewhere = await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: ws.rootId } });
    const into = await call('PATCH', `/items/${folders[3]!.id}/move`, { key: ws.orgKey, body: { parentFolderId: folders[2]!.id } });
    const outOf = await call('PATCH', `/items/${folders[2]!.id}/move`, { key: ws.orgKey, body: { parentFolderId: ws.rootId } });
    const repeat = await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } });

    expect([elsewhere.status, into.status, outOf.status, repeat.status]).toEqual([409, 409, 409, 200]);
    expect(repeat.body.data).toMatchObject({ id: top.id, workspaceId: other.id, parentFolderId: other.rootFolderId });
    expect((await moveFinished(top.id))?.state).toBe('done');
    expect(
      (await call('PATCH', `/items/${folders[3]!.id}/move`, { key: ws.orgKey, body: { parentFolderId: folders[2]!.id } })).status,
    ).toBe(200);
  });
});

describe('The move worker is idempotent per item and bounded per batch', { timeout: 180_000 }, () => {
  it(`carries at most ${MOVE_BATCH_ITEMS} items a batch, and batches run twice at once carry and count each item once`, async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const { top, folders, markups } = await makeTree(ws, 300);
    await armFault('after-move-commit', top.id);
    expect((await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } })).status).toBe(
      500,
    );

    // The subfolders (3 below the moved one) and the first markups: one bounded batch, its progress on the record.
    expect(await carryMoveBatch(top.id)).toBe('continue');
    const first = await getMove(top.id);
    expect(first!.carriedFolders + first!.carriedMarkups).toBe(MOVE_BATCH_ITEMS);
    expect(first!.batches).toBe(1);
    // Redelivered jobs: two batches at once, again and again, until the move is done (a second after its first quiet batch).
    const deadline = Date.now() + 30_000;
    while ((await getMove(top.id))?.state !== 'done' && Date.now() < deadline) {
      await Promise.all([carryMoveBatch(top.id), carryMoveBatch(top.id)]);
    }

    const done = await getMove(top.id);
    expect(done).toMatchObject({ state: 'done', carriedFolders: folders.length - 1, carriedMarkups: markups.length });
    expect((await workspaceMarkupIds(other.id)).size).toBe(markups.length);
    expect((await workspaceMarkupIds(ws.workspaceId)).size).toBe(0);
    expect(await carryMoveBatch(top.id)).toBe('done');
  });

  it('finishes a move only by a quiet batch a full recheck after the first, however many copies of its job run', async () => {
    const ws = await makeItemsWorkspace();
    const other = await makeSecondWorkspace(ws.orgKey);
    const { top, markups } = await makeTree(ws, 2);
    await armFault('after-move-commit', top.id);
    expect((await call('PATCH', `/items/${top.id}/move`, { key: ws.orgKey, body: { parentFolderId: other.rootFolderId } })).status).toBe(
      500,
    );
    expect(await carryMoveBatch(top.id)).toBe('continue');

    // Two copies of the job, one right after the other: the first finds nothing left, the second must wait its second.
    const firstQuiet = await carryMoveBatch(top.id);
    const secondQuiet = await carryMoveBatch(top.id);

    expect([firstQuiet, secondQuiet]).toEqual(['recheck', 'recheck']);
    expect((await getMove(top.id))?.state).toBe('carrying');
    const outcome = await eventually(
      () => carryMoveBatch(top.id),
      (value) => value === 'done',
      15_000,
    );
    expect(outcome).toBe('done');
    expect((await getMove(top.id))?.carriedMarkups).toBe(markups.length);
  });
});
