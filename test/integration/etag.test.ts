import { describe, expect, it } from 'vitest';
import { call, makeOrganization, type ApiResponse } from '../support/api.js';
import { makeConversation, patchMessage } from '../support/conversations.js';
import { expectProblem } from '../support/problems.js';
import { reply } from '../support/threads.js';

const ROUNDS = 10;

/** GET with an If-None-Match of the ETag it answered: 304 with no body. */
async function expectNotModified(path: string, key: string, query?: Record<string, string>): Promise<string> {
  const first = await call('GET', path, { key, query });
  const etag = first.headers.get('etag');
  expect(first.status).toBe(200);
  expect(etag).toMatch(/^"\d+-[\w-]+"$/);
  const again = await call('GET', path, { key, query, headers: { 'If-None-Match': `W/"other", ${etag!}` } });
  expect(again.status).toBe(304);
  expect(again.body).toBe('');
  expect(again.headers.get('etag')).toBe(etag);
  return etag!;
}

/** Two writers holding one ETag, at once: exactly one 2xx, the other 412. */
function expectOneWinner(responses: ApiResponse[]): ApiResponse {
  const statuses = responses.map((response) => response.status).sort();
  expect(statuses[0]).toBeLessThan(300);
  expect(statuses[1]).toBe(412);
  const loser = responses.find((response) => response.status === 412)!;
  expectProblem(loser, 412);
  expect(loser.body.type).toBe('urn:review-board:problem:precondition-failed');
  return responses.find((response) => response.status < 300)!;
}

describe('ETag, If-None-Match and If-Match (docs/api.md, "ETag, If-Match, If-None-Match")', () => {
  it('answers a workspace with an ETag, 304 while unchanged and a new ETag after a rename', async () => {
    const org = await makeOrganization();
    const etag = await expectNotModified('/workspace', org.workspaceKey);

    const renamed = await call('PATCH', '/workspace', { key: org.workspaceKey, body: { name: 'Renamed' }, headers: { 'If-Match': etag } });
    const after = await call('GET', '/workspace', { key: org.workspaceKey, headers: { 'If-None-Match': etag } });

    expect(renamed.status).toBe(200);
    expect(after.status).toBe(200);
    expect(after.body.data.name).toBe('Renamed');
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(after.headers.get('etag')).toBe(renamed.headers.get('etag'));
  });

  it('lets exactly one of two workspace renames with one ETag win, and keeps its name', async () => {
    const org = await makeOrganization();
    for (let round = 0; round < ROUNDS; round += 1) {
      const etag = (await call('GET', '/workspace', { key: org.workspaceKey })).headers.get('etag')!;
      const names = [`A ${round}`, `B ${round}`];
      const responses = await Promise.all(
        names.map((name) => call('PATCH', '/workspace', { key: org.workspaceKey, body: { name }, headers: { 'If-Match': etag } })),
      );
      const winner = expectOneWinner(responses);
      expect((await call('GET', '/workspace', { key: org.workspaceKey })).body.data.name).toBe(winner.body.data.name);
    }
  });

  it('refuses a stale or weak If-Match with 412 and changes nothing; * and a list holding the current ETag pass', async () => {
    const org = await makeOrganization();
    const stale = (await call('GET', '/workspace', { key: org.workspaceKey })).headers.get('etag')!;
    await call('PATCH', '/workspace', { key: org.workspaceKey, body: { name: 'Second' } });
    const current = (await call('GET', '/workspace', { key: org.workspaceKey })).headers.get('etag')!;

    const refused = await call('PATCH', '/workspace', { key: org.workspaceKey, body: { name: 'Third' }, headers: { 'If-Match': stale } });
    const weak = await call('PATCH', '/workspace', {
      key: org.workspaceKey,
      body: { name: 'Third' },
      headers: { 'If-Match': `W/${current}` },
    });
    const deleteRefused = await call('DELETE', '/workspace', { key: org.workspaceKey, headers: { 'If-Match': stale } });
    const stillThere = await call('GET', '/workspace', { key: org.workspaceKey });
    const listed = await call('PATCH', '/workspace', {
      key: org.workspaceKey,
      body: { name: 'Fourth' },
      headers: { 'If-Match': `${stale}, ${current}` },
    });
    const any = await call('PATCH', '/workspace', { key: org.workspaceKey, body: { name: 'Fifth' }, headers: { 'If-Match': '*' } });

    expectProblem(refused, 412);
    expectProblem(weak, 412);
    expectProblem(deleteRefused, 412);
    expect(stillThere.status).toBe(200);
    expect(stillThere.body.data.name).toBe('Second');
    expect(listed.status).toBe(200);
    expect(any.status).toBe(200);
  });

  it('answers a thread with an ETag that changes with a reply, and lets one of two resolves with one ETag win', async () => {
    const { org, thread } = await makeConversation();
    const etag = await expectNotModified(`/threads/${thread.id}`, org.workspaceKey);
    await reply(org.workspaceKey, thread.id);
    const changed = await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey, headers: { 'If-None-Match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);

    for (let round = 0; round < ROUNDS; round += 1) {
      const current = (await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).headers.get('etag')!;
      const action = round % 2 === 0 ? 'resolve' : 'unresolve';
      const responses = await Promise.all(
        [0, 1].map(() => call('POST', `/threads/${thread.id}/${action}`, { key: org.workspaceKey, headers: { 'If-Match': current } })),
      );
      const winner = expectOneWinner(responses);
      expect(winner.status).toBe(200);
      expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data.resolved).toBe(action === 'resolve');
    }
  });

  it('refuses a thread delete with a stale If-Match and keeps the thread', async () => {
    const { org, thread } = await makeConversation();
    const stale = (await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).headers.get('etag')!;
    await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey });

    const refused = await call('DELETE', `/threads/${thread.id}`, { key: org.workspaceKey, headers: { 'If-Match': stale } });

    expectProblem(refused, 412);
    expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).status).toBe(200);
  });

  it('answers a message (GET /messages/{id}, an extension) with an ETag, 304 while unchanged, a new ETag after an edit, and refuses an edit at a stale one', async () => {
    const { org, thread } = await makeConversation();
    const message = await reply(org.workspaceKey, thread.id, { content: 'First' });
    const etag = await expectNotModified(`/messages/${message.id}`, org.workspaceKey);

    const edited = await call('PATCH', `/messages/${message.id}`, {
      key: org.workspaceKey,
      body: { content: 'Second' },
      headers: { 'If-Match': etag },
    });
    const after = await call('GET', `/messages/${message.id}`, { key: org.workspaceKey, headers: { 'If-None-Match': etag } });
    const stale = await call('PATCH', `/messages/${message.id}`, {
      key: org.workspaceKey,
      body: { content: 'Third' },
      headers: { 'If-Match': etag },
    });
    const shown = (await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data.messages.find(
      (m: { id: string }) => m.id === message.id,
    );

    expect(edited.status).toBe(200);
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(after.body.data).toEqual(shown);
    expect(after.body.data.content).toBe('Second');
    expectProblem(stale, 412);
    expect(shown.content).toBe('Second');
  });

  it('answers a message edit with an ETag and lets one of two edits with one ETag win', async () => {
    const { org, thread } = await makeConversation();
    const message = await reply(org.workspaceKey, thread.id, { content: 'First' });
    const read = await patchMessage(org.workspaceKey, message.id, {});
    let etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^"\d+-[\w-]+"$/);

    for (let round = 0; round < ROUNDS; round += 1) {
      const contents = [`A ${round}`, `B ${round}`];
      const responses = await Promise.all(
        contents.map((content) =>
          call('PATCH', `/messages/${message.id}`, { key: org.workspaceKey, body: { content }, headers: { 'If-Match': etag } }),
        ),
      );
      const winner = expectOneWinner(responses);
      const shown = (await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data.messages.find(
        (m: { id: string }) => m.id === message.id,
      );
      expect(shown.content).toBe(winner.body.data.message.content);
      etag = winner.headers.get('etag')!;
    }

    const deleteRefused = await call('DELETE', `/messages/${message.id}`, {
      key: org.workspaceKey,
      headers: { 'If-Match': read.headers.get('etag')! },
    });
    const deleted = await call('DELETE', `/messages/${message.id}`, { key: org.workspaceKey, headers: { 'If-Match': etag } });
    expectProblem(deleteRefused, 412);
    expect(deleted.status).toBe(204);
  });

  it('answers a markup with an ETag that changes when its thread is resolved, and lets one of two renames with one ETag win', async () => {
    const { org, markup, thread } = await makeConversation();
    const etag = await expectNotModified(`/markups/${markup.id}`, org.workspaceKey);
    await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey });
    const changed = await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey, headers: { 'If-None-Match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);

    for (let round = 0; round < ROUNDS; round += 1) {
      const current = (await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).headers.get('etag')!;
      const names = [`A ${round}`, `B ${round}`];
      const responses = await Promise.all(
        names.map((name) =>
          call('POST', `/markups/${markup.id}`, { key: org.workspaceKey, body: { name }, headers: { 'If-Match': current } }),
        ),
      );
      const winner = expectOneWinner(responses);
      expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.name).toBe(winner.body.data.name);
    }

    const refused = await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey, headers: { 'If-Match': etag } });
    expectProblem(refused, 412);
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(200);
  });

  it('answers a folder item with an ETag, 304 while unchanged, and refuses a stale rename or delete', async () => {
    const org = await makeOrganization();
    const workspace = (await call('GET', '/workspace', { key: org.workspaceKey })).body.data;
    const folder = (
      await call('POST', '/items', { key: org.workspaceKey, body: { parentFolderId: workspace.rootFolderId, name: 'Designs' } })
    ).body.data;
    const etag = await expectNotModified(`/items/${folder.id}`, org.workspaceKey);

    const renamed = await call('PATCH', `/items/${folder.id}`, {
      key: org.workspaceKey,
      body: { name: 'Drafts' },
      headers: { 'If-Match': etag },
    });
    const staleRename = await call('PATCH', `/items/${folder.id}`, {
      key: org.workspaceKey,
      body: { name: 'Other' },
      headers: { 'If-Match': etag },
    });
    const staleDelete = await call('DELETE', `/items/${folder.id}`, { key: org.workspaceKey, headers: { 'If-Match': etag } });
    const after = await call('GET', `/items/${folder.id}`, { key: org.workspaceKey, headers: { 'If-None-Match': etag } });

    expect(renamed.status).toBe(204);
    expectProblem(staleRename, 412);
    expectProblem(staleDelete, 412);
    expect(after.status).toBe(200);
    expect(after.body.data.name).toBe('Drafts');
    expect(after.headers.get('etag')).not.toBe(etag);
  });

  it('lets one of two folder renames with one ETag win', async () => {
    const org = await makeOrganization();
    const workspace = (await call('GET', '/workspace', { key: org.workspaceKey })).body.data;
    const folder = (
      await call('POST', '/items', { key: org.workspaceKey, body: { parentFolderId: workspace.rootFolderId, name: 'Start' } })
    ).body.data;
    for (let round = 0; round < ROUNDS; round += 1) {
      const current = (await call('GET', `/items/${folder.id}`, { key: org.workspaceKey })).headers.get('etag')!;
      const names = [`A ${round}`, `B ${round}`];
      const responses = await Promise.all(
        names.map((name) =>
          call('PATCH', `/items/${folder.id}`, { key: org.workspaceKey, body: { name }, headers: { 'If-Match': current } }),
        ),
      );
      expectOneWinner(responses);
      const winner = names[responses.findIndex((response) => response.status < 300)];
      expect((await call('GET', `/items/${folder.id}`, { key: org.workspaceKey })).body.data.name).toBe(winner);
    }
  });
});
