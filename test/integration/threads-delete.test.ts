import { describe, expect, it } from 'vitest';
import { markupPartition } from '../../shared/db/markup-records.js';
import { queryPrefix } from '../../shared/db/core/paging.js';
import { call, makeOrganization } from '../support/api.js';
import { makeMemberKey } from '../support/items.js';
import { expectProblem } from '../support/problems.js';
import { listThreads, markupOf, viewModeCounts } from '../support/thread-reads.js';
import { MOBILE, TABLET, createThread, makeTypedMarkup, reply } from '../support/threads.js';

describe('DELETE /threads/:id (deletes the thread and all its messages)', () => {
  it('answers 204 and takes the thread, its messages and its counts away', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const kept = await createThread(org.workspaceKey, markup, { viewModeId: MOBILE });
    const thread = await createThread(org.workspaceKey, markup, { viewModeId: MOBILE });
    const answer = await reply(org.workspaceKey, thread.id, { content: 'Reply' });
    expect((await viewModeCounts(org.workspaceKey, markup.id))[MOBILE]).toBe(2);

    const deleted = await call('DELETE', `/threads/${thread.id}`, { key: org.workspaceKey });

    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expectProblem(await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey }), 404);
    expectProblem(await call('DELETE', `/threads/${thread.id}`, { key: org.workspaceKey }), 404);
    expectProblem(await call('PATCH', `/messages/${thread.messages[0].id}`, { key: org.workspaceKey, body: { content: 'Edit' } }), 404);
    expectProblem(await call('PATCH', `/messages/${answer.id}`, { key: org.workspaceKey, body: { content: 'Edit' } }), 404);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(1);
    expect((await viewModeCounts(org.workspaceKey, markup.id))[MOBILE]).toBe(1);
    const listed = await listThreads(org.workspaceKey, { markupId: markup.id });
    expect(listed.total).toBe(1);
    expect(listed.threads.map((listedThread) => listedThread.id)).toEqual([kept.id]);
  });

  it("removes every reader's read marks of the thread and its messages, keeping those of other threads", async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const reader = await makeMemberKey(org.workspaceId, 'viewer');
    const kept = await createThread(org.workspaceKey, markup);
    const thread = await createThread(org.workspaceKey, markup);
    const answer = await reply(org.workspaceKey, thread.id, { content: 'Reply' });
    for (const path of [`/threads/${thread.id}/read`, `/messages/${answer.id}/read`, `/threads/${kept.id}/read`]) {
      expect((await call('POST', path, { key: reader })).status).toBe(204);
    }
    const marksOf = async (threadId: string) =>
      (await queryPrefix(markupPartition(markup.id), 'READ#', { consistent: true })).filter((mark) => mark.threadId === threadId);
    // One item a reader and thread: the writer's (the thread, its message and the reply) and the reader's (the thread and the reply).
    expect(await marksOf(thread.id)).toHaveLength(2);

    expect((await call('DELETE', `/threads/${thread.id}`, { key: org.workspaceKey })).status).toBe(204);

    expect(await marksOf(thread.id)).toEqual([]);
    expect(await marksOf(kept.id)).toHaveLength(2);
  });

  it('deletes a thread once when many requests delete it at once', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    await createThread(org.workspaceKey, markup, { viewModeId: TABLET });
    const thread = await createThread(org.workspaceKey, markup, { viewModeId: TABLET });

    const answers = await Promise.all(Array.from({ length: 8 }, () => call('DELETE', `/threads/${thread.id}`, { key: org.workspaceKey })));

    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([204, 404, 404, 404, 404, 404, 404, 404]);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(1);
    expect((await viewModeCounts(org.workspaceKey, markup.id))[TABLET]).toBe(1);
  });

  it('does not count a resolved thread out of activeThreads twice', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    await createThread(org.workspaceKey, markup);
    const thread = await createThread(org.workspaceKey, markup);
    await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey });

    expect((await call('DELETE', `/threads/${thread.id}`, { key: org.workspaceKey })).status).toBe(204);

    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(1);
  });

  it("lets its author delete it as a contributor, refuses another contributor with 403, and lets an admin delete anyone's", async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const [author, other, admin] = await Promise.all([
      makeMemberKey(org.workspaceId, 'contributor'),
      makeMemberKey(org.workspaceId, 'contributor'),
      makeMemberKey(org.workspaceId, 'admin'),
    ]);
    const own = await createThread(author, markup);
    const second = await createThread(author, markup);
    const seenByOther = (await call('GET', `/threads/${second.id}`, { key: other })).body.data;

    const byOther = await call('DELETE', `/threads/${second.id}`, { key: other });
    const byAuthor = await call('DELETE', `/threads/${own.id}`, { key: author });
    const byAdmin = await call('DELETE', `/threads/${second.id}`, { key: admin });

    expect(own.scopes).toContain('delete-thread');
    expect(seenByOther.scopes).not.toContain('delete-thread');
    expectProblem(byOther, 403);
    expect(byAuthor.status).toBe(204);
    expect(byAdmin.status).toBe(204);
    expect((await listThreads(admin, { markupId: markup.id })).total).toBe(0);
    expect((await markupOf(admin, markup.id)).activeThreads).toBe(0);
  });

  it('leaves no thread of a deleted markup reachable', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const first = await createThread(org.workspaceKey, markup);
    const second = await createThread(org.workspaceKey, markup);
    const answer = await reply(org.workspaceKey, second.id, { content: 'Reply' });

    expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(204);

    for (const thread of [first, second]) {
      expectProblem(await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey }), 404);
      expectProblem(await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey }), 404);
    }
    expectProblem(await call('PATCH', `/messages/${answer.id}`, { key: org.workspaceKey, body: { content: 'Edit' } }), 404);
    expectProblem(await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } }), 404);
  });
});
