import { describe, expect, it } from 'vitest';
import { listEvents } from '../../shared/db/events.js';
import { call, makeOrganization } from '../support/api.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { expectProblem } from '../support/problems.js';
import { listThreads, markupOf, numbersOf } from '../support/thread-reads.js';
import { createThread, makeTypedMarkup } from '../support/threads.js';

describe('POST /threads/:id/resolve and /unresolve (States and transitions; Events)', () => {
  it('resolves and unresolves, idempotently, moving activeThreads 1 -> 0 -> 1 and recording each change once', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(1);

    const resolved = await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey });
    const resolvedAgain = await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey });
    const afterResolve = await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey });
    const activeWhileResolved = (await markupOf(org.workspaceKey, markup.id)).activeThreads;
    const unresolved = await call('POST', `/threads/${thread.id}/unresolve`, { key: org.workspaceKey });
    const unresolvedAgain = await call('POST', `/threads/${thread.id}/unresolve`, { key: org.workspaceKey });
    const afterUnresolve = await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey });

    expect(resolved.status).toBe(200);
    expect(resolved.body.data).toEqual({ threadId: thread.id, modifiedAt: expect.any(Number) });
    expect(resolved.body.data.modifiedAt).toBeGreaterThan(thread.modifiedAt);
    expect(resolvedAgain.body.data).toEqual(resolved.body.data);
    expect(afterResolve.body.data).toMatchObject({ resolved: true, modifiedAt: resolved.body.data.modifiedAt });
    expect(activeWhileResolved).toBe(0);
    expect(unresolved.status).toBe(200);
    expect(unresolved.body.data).toEqual({ threadId: thread.id });
    expect(unresolvedAgain.body.data).toEqual({ threadId: thread.id });
    expect(afterUnresolve.body.data.resolved).toBe(false);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(1);
    const events = (await listEvents(org.workspaceId)).filter((event) => event.threadId === thread.id);
    expect(events.map((event) => event.type)).toEqual(['comment_created', 'comment_resolved', 'comment_unresolved']);
    for (const event of events) expect(event.markupId).toBe(markup.id);
  });

  it('counts a thread out of activeThreads once when it is resolved by many requests at once', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const threads: { id: string }[] = [];
    for (let i = 0; i < 4; i += 1) threads.push(await createThread(org.workspaceKey, markup));

    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => call('POST', `/threads/${threads[0]!.id}/resolve`, { key: org.workspaceKey })),
      ...threads.slice(1, 3).map((thread) => call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey })),
    ]);

    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(new Set(answers.slice(0, 10).map((answer) => answer.body.data.modifiedAt)).size).toBe(1);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(1);
    expect(numbersOf((await listThreads(org.workspaceKey, { markupId: markup.id, resolved: false })).threads)).toEqual([4]);
    const resolvedEvents = (await listEvents(org.workspaceId)).filter((event) => event.type === 'comment_resolved');
    expect(resolvedEvents.map((event) => event.threadId).sort()).toEqual(
      threads
        .slice(0, 3)
        .map((thread) => thread.id)
        .sort(),
    );
  });

  it('records comment_updated with the markup when a pin moves', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const thread = await createThread(org.workspaceKey, markup);

    await call('PATCH', `/threads/${thread.id}/move-pin`, {
      key: org.workspaceKey,
      body: { viewportXPercentage: 50, viewportYPercentage: 50 },
    });

    const events = (await listEvents(org.workspaceId)).filter((event) => event.threadId === thread.id);
    expect(events.map((event) => [event.type, event.markupId])).toEqual([
      ['comment_created', markup.id],
      ['comment_updated', markup.id],
    ]);
  });

  it('answers 403 to a viewer, 404 for an unknown thread and 401 without a key, changing nothing', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    expectProblem(await call('POST', `/threads/${thread.id}/resolve`, { key: viewer }), 403);
    expectProblem(await call('POST', `/threads/${thread.id}/unresolve`, { key: viewer }), 403);
    expectProblem(await call('POST', `/threads/${missingId}/resolve`, { key: org.workspaceKey }), 404);
    expectProblem(await call('POST', `/threads/${thread.id}/resolve`, { key: null }), 401);

    expect((await call('GET', `/threads/${thread.id}`, { key: viewer })).body.data.resolved).toBe(false);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(1);
  });
});
