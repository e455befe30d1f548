import { describe, expect, it } from 'vitest';
import { markReady } from '../../functions/conversion/markup-outcome.js';
import type { OutputObjects } from '../../functions/conversion/objects.js';
import { listEvents, type EventRecord } from '../../shared/db/events.js';
import { armFault } from '../../shared/db/core/faults.js';
import { call, makeOrganization, type Org } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { listThreads } from '../support/thread-reads.js';
import { makeSecondWorkspace } from '../support/workspaces.js';
import { eventually } from '../support/polling.js';
import { createThread, makeTypedMarkup, reply, threadBody } from '../support/threads.js';

/** Events are committed with their change (an outbox item in the same transaction): DESIGN.md "Which operation emits which event". */

async function eventsOf(org: Org, done: (events: EventRecord[]) => boolean): Promise<EventRecord[]> {
  return eventually(() => listEvents(org.workspaceId), done, 5_000);
}

const ofType = (events: EventRecord[], type: EventRecord['type']) => events.filter((event) => event.type === type);

describe('events written in the transaction of their change', () => {
  it('markup_created: one per markup of a 50-markup bulk creation, each with its own id', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: null });
    const response = await call('POST', '/markups/bulk/from-url', {
      key: org.workspaceKey,
      body: { items: Array.from({ length: 50 }, (_, i) => ({ url: `https://e.example/${i}` })) },
    });
    expect(response.status).toBe(204);
    const list = await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 100 } });
    const events = ofType(await eventsOf(org, (found) => found.length >= 50), 'markup_created');
    expect(events.map((event) => event.markupId).sort()).toEqual(list.body.data.data.map((markup: { id: string }) => markup.id).sort());
    expect(new Set(events.map((event) => event.id)).size).toBe(50);
    for (const event of events) expect(event.workspaceId).toBe(org.workspaceId);
  });

  it('set_project_read_only: one per real change', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const markup = await makeTypedMarkup(org, 'webpage');
    await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    const events = await eventsOf(org, (found) => found.length >= 1);
    expect(events.map((event) => [event.type, event.markupId])).toEqual([['set_project_read_only', markup.id]]);
  });

  it('comment_created, comment_reply_created, comment_updated (edit and pin move), comment_resolved, comment_unresolved: one each with their ids', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const message = await reply(org.workspaceKey, thread.id);
    expect((await call('PATCH', `/messages/${message.id}`, { key: org.workspaceKey, body: { content: 'Edited' } })).status).toBe(200);
    const moved = await call('PATCH', `/threads/${thread.id}/move-pin`, {
      key: org.workspaceKey,
      body: { viewportXPercentage: 10, viewportYPercentage: 20 },
    });
    expect(moved.status).toBe(200);
    await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey });
    await call('POST', `/threads/${thread.id}/unresolve`, { key: org.workspaceKey });

    const events = await eventsOf(org, (found) => found.length >= 6);
    expect(events.map(({ type, markupId, threadId, messageId }) => ({ type, markupId, threadId, messageId }))).toEqual([
      { type: 'comment_created', markupId: markup.id, threadId: thread.id, messageId: thread.messages[0].id },
      { type: 'comment_reply_created', markupId: markup.id, threadId: thread.id, messageId: message.id },
      { type: 'comment_updated', markupId: markup.id, threadId: thread.id, messageId: message.id },
      { type: 'comment_updated', markupId: markup.id, threadId: thread.id, messageId: undefined },
      { type: 'comment_resolved', markupId: markup.id, threadId: thread.id, messageId: undefined },
      { type: 'comment_unresolved', markupId: markup.id, threadId: thread.id, messageId: undefined },
    ]);
  });

  it('a crash right after the commit keeps both the change and its event (the old separate write lost the event)', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    await armFault('after-thread-commit', markup.id);
    const crashed = await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup) });
    expect(crashed.status).toBe(500);
    const listed = (await listThreads(org.workspaceKey, { markupId: markup.id })).threads;
    expect(listed).toHaveLength(1);
    const events = await eventsOf(org, (found) => found.length >= 1);
    expect(events.map((event) => [event.type, event.threadId])).toEqual([['comment_created', listed[0]!.id]]);
  });

  it('a refused transaction records nothing: thread creations racing a markup deletion leave one event per created thread (20 races)', async () => {
    const org = await makeOrganization();
    for (let run = 0; run < 20; run += 1) {
      const markup = await makeTypedMarkup(org, 'webpage');
      const [created, deleted] = await Promise.all([
        call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup) }),
        call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey }),
      ]);
      expect(deleted.status).toBe(204);
      expect([200, 404, 409]).toContain(created.status);
      const events = (await listEvents(org.workspaceId)).filter((event) => event.markupId === markup.id);
      expect(events.map((event) => [event.type, event.threadId])).toEqual(
        created.status === 200 ? [['comment_created', created.body.data.id]] : [],
      );
    }
  });

  it('20 thread creations racing on one markup (its counters in every transaction): one event per created thread', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup) })),
    );
    const createdIds = responses.filter((response) => response.status === 200).map((response) => response.body.data.id as string);
    expect(responses.every((response) => response.status === 200 || response.status === 409)).toBe(true);
    const events = ofType(await eventsOf(org, (found) => found.length >= createdIds.length), 'comment_created');
    expect(events.map((event) => event.threadId).sort()).toEqual(createdIds.sort());
    expect(new Set(events.map((event) => event.id)).size).toBe(createdIds.length);
  });

  it('markup_ready: once for repeated runs, in the workspace the markup is in when the outcome commits (moved meanwhile)', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey);
    const stored = await makeTypedMarkup({ organizationId: org.organizationId, workspaceId: other.id }, 'image', {
      conversionStatus: 'pending',
      isReady: false,
    });
    // The worker read the markup before an organization key moved it to the other workspace.
    const readBeforeMove = { ...stored, workspaceId: org.workspaceId };
    const converted = {
      changes: { images: [] },
      category: 'images' as const,
      bytes: 0,
      thumbnail: { error: 'No thumbnail in this test.' },
    };
    const outputs = { deleteAll: async () => {} } as unknown as OutputObjects;
    await markReady(readBeforeMove, converted, outputs);
    await markReady(readBeforeMove, converted, outputs);

    const events = await eventually(
      () => listEvents(other.id),
      (found) => found.length >= 1,
      5_000,
    );
    expect(events.filter((event) => event.type === 'markup_ready').map((event) => event.markupId)).toEqual([stored.id]);
    expect(await listEvents(org.workspaceId)).toEqual([]);
  });

  it('retried attempts leave one event per committed reply: 20 replies racing on one thread (stale reads retried)', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', `/threads/${thread.id}/messages`, { key: org.workspaceKey, body: { content: `Reply ${i}` } }),
      ),
    );
    expect(responses.every((response) => response.status === 200 || response.status === 409)).toBe(true);
    const createdIds = responses.filter((response) => response.status === 200).map((response) => response.body.data.id as string);
    const events = ofType(await eventsOf(org, (found) => found.length >= createdIds.length + 1), 'comment_reply_created');
    expect(events.map((event) => event.messageId).sort()).toEqual(createdIds.sort());
    expect(new Set(events.map((event) => event.id)).size).toBe(createdIds.length);
  });
});
