import { describe, expect, it } from 'vitest';
import { call } from '../support/api.js';
import { makeItemsWorkspace } from '../support/folder-items.js';
import { expectProblem } from '../support/problems.js';
import { createThread, makeTypedMarkup, threadBody } from '../support/threads.js';

/**
 * Text the table cannot store as sent, or that would make strict JSON readers (jq, serde_json)
 * refuse every later answer showing it, is a 400 naming the field: a lone UTF-16 surrogate in any
 * string of any body, and control characters in names.
 */
describe('well-formed text', () => {
  it('refuses a lone surrogate or a control character in workspace, folder and markup names (400 naming the field)', async () => {
    const ws = await makeItemsWorkspace();
    for (const name of ['a\ud800b', 'Zed\ud800', '\udc00x', 'bell\u0007', '\u0000', 'tab\tname']) {
      expectProblem(await call('POST', '/workspace', { key: ws.orgKey, body: { name } }), 400, '/body/name');
      expectProblem(await call('PATCH', '/workspace', { key: ws.workspaceKey, body: { name } }), 400, '/body/name');
      expectProblem(await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name } }), 400, '/body/name');
      expectProblem(
        await call('POST', '/markups/url', { key: ws.workspaceKey, body: { url: 'https://example.com/', name } }),
        400,
        '/body/name',
      );
    }
    const lone = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name: 'bad\ud800name' } });
    expect(lone.body.errors[0].detail).toMatch(/surrogate/);

    // Well-formed text outside the Basic Multilingual Plane (a surrogate pair) is text like any other.
    const emoji = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name: 'Launch 🚀 plan' } });
    expect(emoji.status, JSON.stringify(emoji.body)).toBe(200);
    const listed = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey });
    expect(listed.body.data.items.map((item: { name: string }) => item.name)).toEqual(['Launch 🚀 plan']);
  });

  it('refuses a lone surrogate anywhere in a body, also in free text and nested fields', async () => {
    const ws = await makeItemsWorkspace();
    const markup = await makeTypedMarkup(ws, 'image');
    const halfSmile = threadBody(markup, { message: { ops: [{ insert: 'half \ud83d a smile\n' }] } });
    const refused = await call('POST', '/threads', { key: ws.workspaceKey, body: halfSmile });
    expectProblem(refused, 400, '/body/message/ops/0/insert');
    expect(refused.body.errors[0].detail).toMatch(/surrogate/);
    const thread = await createThread(ws.workspaceKey, markup, { message: { ops: [{ insert: 'Line one\nline two 😀\n' }] } });
    const shown = await call('GET', `/threads/${thread.id}`, { key: ws.workspaceKey });
    expect(JSON.stringify(shown.body.data)).toContain('😀');
    expectProblem(
      await call('POST', `/threads/${thread.id}/messages`, { key: ws.workspaceKey, body: { content: 'half \ud83d' } }),
      400,
      '/body/content',
    );
    expectProblem(
      await call('POST', `/threads/${thread.id}/messages`, { key: ws.workspaceKey, body: { content: 'ok', extra: { deep: ['\udfff'] } } }),
      400,
      '/body/extra/deep/0',
    );
  });

  it('refuses external ids a URL path cannot name (. and ..), and takes a PATCH that changes nothing (204)', async () => {
    const ws = await makeItemsWorkspace();
    for (const externalId of ['.', '..']) {
      expectProblem(await call('POST', '/users/external', { key: ws.workspaceKey, body: { externalId } }), 400, '/body/externalId');
    }
    expect((await call('POST', '/users/external', { key: ws.workspaceKey, body: { externalId: 'ext-1', name: 'Ada' } })).status).toBe(204);
    expect((await call('PATCH', '/users/external/ext-1', { key: ws.workspaceKey, body: {} })).status).toBe(204);
    const read = await call('GET', '/users/external/ext-1', { key: ws.workspaceKey });
    expect(read.body.data).toMatchObject({ externalId: 'ext-1', name: 'Ada' });
    expectProblem(await call('PATCH', '/users/external/nobody', { key: ws.workspaceKey, body: {} }), 404);
  });
});
