import { describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../support/api.js';
import { makeItemsWorkspace } from '../support/folder-items.js';
import { makeFolder, makeMarkups } from '../support/items.js';
import { expectProblem } from '../support/problems.js';
import { markFolderDeleting } from '../../shared/db/item-writes.js';
import { itemKey } from '../../shared/db/items.js';
import { batchDelete } from '../../shared/db/core/transact.js';

const ROUNDS = 5;

/** A request started `delayMs` after the deletion, while it reads and deletes the tree. */
const after = (delayMs: number, send: () => Promise<ApiResponse>) =>
  new Promise<ApiResponse>((resolve, reject) => setTimeout(() => send().then(resolve, reject), delayMs));

/**
 * DELETE of a folder racing creates and moves into it and moves out of it (issue: a reviewer's
 * kill-and-race runs). Whatever the order, every racing request is a clean success or a clean
 * refusal, a markup moved out with a 200 is never deleted with the folder, and nothing is left
 * pointing at a folder that is gone.
 */
describe(`DELETE /items/:id of a folder racing moves and creates (${ROUNDS} rounds)`, { timeout: 120_000 }, () => {
  it('deletes what was inside when it began, never what moved out, and leaves nothing without a parent', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const ws = await makeItemsWorkspace();
      const key = ws.workspaceKey;
      const doomed = await makeFolder(key, ws.rootId, `Doomed ${round}`);
      const inner = await makeFolder(key, doomed.id, 'Inner');
      const inside = await makeMarkups(40, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: doomed.id });
      const deeper = await makeMarkups(20, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: inner.id });
      const outside = await makeMarkups(8, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: ws.rootId });
      const movingOut = [...inside.slice(0, 6), ...deeper.slice(0, 4)];

      // Some racing requests land before the deletion begins, some while it runs: the deletion starts a little after the first ones.
      const deletion = after(15 + round * 5, () => call('DELETE', `/items/${doomed.id}`, { key }));
      const racing = await Promise.all([
        ...movingOut.map((markup, i) =>
          after(i * 7, () => call('PATCH', `/items/${markup.id}/move`, { key, body: { parentFolderId: ws.rootId } })).then((answer) => ({
            kind: 'out' as const,
            id: markup.id,
            answer,
          })),
        ),
        ...outside.map((markup, i) =>
          after(i * 7, () =>
            call('PATCH', `/items/${markup.id}/move`, { key, body: { parentFolderId: i % 2 ? doomed.id : inner.id } }),
          ).then((answer) => ({ kind: 'in' as const, id: markup.id, answer })),
        ),
        ...[0, 1, 2, 3].map((i) =>
          after(i * 9, () =>
            call('POST', '/items', { key, body: { parentFolderId: i % 2 ? doomed.id : inner.id, name: `Late ${i}` } }),
          ).then((answer) => ({ kind: 'folder' as const, id: answer.body?.data?.id as string | undefined, answer })),
        ),
        ...[0, 1, 2, 3].map((i) =>
          after(i * 9, () =>
            call('POST', '/markups/url', {
              key,
              body: { url: `https://example.com/late-${round}-${i}`, parentFolderId: i % 2 ? doomed.id : inner.id },
            }),
          ).then((answer) => ({ kind: 'markup' as const, id: answer.body?.data?.id as string | undefined, answer })),
        ),
      ]);
      const deleted = await deletion;
      expect(deleted.status, `round ${round}: ${JSON.stringify(deleted.body)}`).toBe(204);
      expect((await call('GET', `/items/${doomed.id}`, { key })).status).toBe(404);
      expect((await call('GET', `/items/${inner.id}`, { key })).status).toBe(404);

      const tally = racing.map(({ kind, answer }) => `${kind}:${answer.status}`).sort();
      console.info(
        `delete race round ${round}: ${[...new Set(tally)].map((entry) => `${entry} x${tally.filter((t) => t === entry).length}`).join(', ')}`,
      );
      for (const { kind, id, answer } of racing) {
        // A clean answer: done, or refused with a problem (the folder is being deleted, or gone).
        expect([200, 404, 409], `round ${round} ${kind}: ${JSON.stringify(answer.body)}`).toContain(answer.status);
        if (answer.status === 200 && kind === 'out') {
          const read = await call('GET', `/items/${id}`, { key });
          expect(read.status, `round ${round}: markup ${id} moved out with 200, then deleted`).toBe(200);
          expect(read.body.data.parentFolderId).toBe(ws.rootId);
        }
        if (!id) continue;
        const read = await call('GET', `/items/${id}`, { key });
        if (read.status === 404) continue;
        expect(read.status).toBe(200);
        const parent = await call('GET', `/items/${read.body.data.parentFolderId}`, { key });
        expect(parent.status, `round ${round}: ${kind} ${id} left in a deleted folder`).toBe(200);
      }
    }
  });

  it('keeps the widest bulk requests within one transaction: 50 URL markups into 50 folders, 50 markups moved out of 50 folders', async () => {
    const ws = await makeItemsWorkspace();
    const key = ws.workspaceKey;
    const folders = await Promise.all(Array.from({ length: 50 }, (_, i) => makeFolder(key, ws.rootId, `Wide ${i}`)));
    const created = await call('POST', '/markups/bulk/from-url', {
      key,
      body: { items: folders.map((folder, i) => ({ url: `https://example.com/wide-${i}`, parentFolderId: folder.id })) },
    });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    const markupIds = await Promise.all(
      folders.map(async (folder) => (await call('GET', `/items/${folder.id}/items`, { key })).body.data.items[0].id as string),
    );
    const target = await makeFolder(key, ws.rootId, 'Together');
    const moved = await call('POST', '/markups/bulk/move', { key, body: { markupIds, targetFolderId: target.id } });
    expect(moved.status, JSON.stringify(moved.body)).toBeLessThan(300);
    expect((await call('GET', `/items/${target.id}/items`, { key, query: { limit: 100 } })).body.data.items).toHaveLength(50);

    // A folder being deleted lets nothing out, in one move or in bulk: a clear 409, not a retry that ends in 'try again'.
    await call('DELETE', `/items/${folders[0]!.id}`, { key });
    const marked = await makeFolder(key, ws.rootId, 'Marked');
    const [inside] = await makeMarkups(1, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: marked.id });
    await markFolderDeleting(marked.id, Date.now());
    expectProblem(await call('POST', '/markups/bulk/move', { key, body: { markupIds: [inside!.id], targetFolderId: target.id } }), 409);
    expectProblem(await call('PATCH', `/items/${inside!.id}/move`, { key, body: { parentFolderId: target.id } }), 409);

    // An item whose folder is gone (left by the old deletion) can still be moved out: moving is how it is rescued.
    const gone = await makeFolder(key, ws.rootId, 'Gone');
    const [stranded] = await makeMarkups(1, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, parentFolderId: gone.id });
    await batchDelete([itemKey(gone.id)]);
    const rescued = await call('PATCH', `/items/${stranded!.id}/move`, { key, body: { parentFolderId: target.id } });
    expect(rescued.status, JSON.stringify(rescued.body)).toBe(200);
  });
});
