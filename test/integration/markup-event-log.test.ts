import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { authenticate } from '../../shared/auth/authenticate.js';
import { withPermission } from '../../shared/auth/authorize.js';
import { listEvents } from '../../shared/db/events.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { createThread as createThreadDirectly, type CreateThreadInput } from '../../shared/domain/comments/create-thread.js';
import { call, makeOrganization, type Org } from '../support/api.js';
import { endUserToken } from '../support/end-users.js';
import { setPlan } from '../support/fixtures.js';
import { eventually } from '../support/polling.js';
import { createThread, reply, threadBody } from '../support/threads.js';
import { fileForm, postFileMarkup, tiffBytes } from '../support/uploads.js';
import { createMarkup } from '../support/url-markups.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

/**
 * Issue 32 item 1: every event of a markup carries `seq`, its markup's events counted from 1
 * without gaps, assigned in the change's transaction; GET /markups/{id}/events reads the log.
 */
interface Entry {
  seq: number;
  event: { id: string; type: string; workspaceId: string; createdAt: string; data: Record<string, any> };
}

const eventsPath = (markupId: string, query = '') => `/markups/${markupId}/events${query}`;

/** One page of the log, 200 asserted. */
async function readPage(
  key: string,
  markupId: string,
  query = '',
): Promise<{ data: Entry[]; hasMore: boolean; nextCursor: string | null }> {
  const response = await call('GET', eventsPath(markupId, query), { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

/** The whole log, page after page of `limit`, following `nextCursor` as `after`. */
async function readLog(key: string, markupId: string, limit = 100): Promise<Entry[]> {
  const entries: Entry[] = [];
  let after = 0;
  for (;;) {
    const page = await readPage(key, markupId, `?after=${after}&limit=${limit}`);
    entries.push(...page.data);
    if (!page.hasMore) return entries;
    expect(page.nextCursor).toBe(String(page.data.at(-1)!.seq));
    after = Number(page.nextCursor);
  }
}

const asMarkup = (created: Record<string, unknown>) => created as unknown as MarkupRecord;
const seqs = (entries: readonly Entry[]) => entries.map((entry) => entry.seq);
const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

async function newMarkup(org: Org): Promise<MarkupRecord> {
  return asMarkup(await createMarkup(org.workspaceKey, { url: `https://example.com/log-${randomUUID()}` }));
}

describe('GET /markups/{id}/events: the per-markup event log (issue 32)', { timeout: 120_000 }, () => {
  it('numbers 20 comments made at once 1..20 after the creation, once each, in three rounds', async () => {
    const org = await makeOrganization();
    const markup = await newMarkup(org);
    let expected = 1;
    for (let round = 0; round < 3; round += 1) {
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call('POST', '/threads', {
            key: org.workspaceKey,
            body: threadBody(markup, { content: `Round ${round} comment ${i}`, message: undefined }),
          }),
        ),
      );
      expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
      expected += 20;
      const log = await readLog(org.workspaceKey, markup.id);
      expect(seqs(log)).toEqual(oneTo(expected));
      expect(log[0]!.event.type).toBe('markup_created');
      const created = log.slice(expected - 20).map((entry) => entry.event);
      expect(created.every((event) => event.type === 'comment_created')).toBe(true);
      expect(created.map((event) => event.data.comment.id).sort()).toEqual(responses.map((response) => response.body.data.id).sort());
      expect(new Set(log.map((entry) => entry.event.id)).size).toBe(expected);
    }
  });

  it('takes 20 replies to one thread at once, each answered 200 and numbered once, in two rounds', async () => {
    const org = await makeOrganization();
    const markup = await newMarkup(org);
    const thread = await createThread(org.workspaceKey, markup);
    let expected = 2;
    for (let round = 0; round < 2; round += 1) {
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call('POST', `/threads/${thread.id}/messages`, { key: org.workspaceKey, body: { content: `Round ${round} reply ${i}` } }),
        ),
      );
      expect(responses.map((response) => `${response.status} ${response.status === 200 ? '' : JSON.stringify(response.body)}`)).toEqual(
        responses.map(() => '200 '),
      );
      expected += 20;
      const log = await readLog(org.workspaceKey, markup.id);
      expect(seqs(log)).toEqual(oneTo(expected));
      expect(log.slice(expected - 20).every((entry) => entry.event.type === 'comment_reply_created')).toBe(true);
    }
  });

  it('numbers comments from two processes at once (the stack over HTTP and this test process, as two Lambda instances) 1..n once each', async () => {
    // Within one process changes on a markup take turns; between processes the head's condition
    // decides, and the loser numbers again from the head its failure handed back.
    const org = await makeOrganization();
    const markup = await newMarkup(org);
    const principal = withPermission(await authenticate(`Bearer ${org.workspaceKey}`), 'thread:create');
    const ids: string[] = [];
    for (let round = 0; round < 2; round += 1) {
      const made = await Promise.all([
        ...Array.from({ length: 10 }, async () => {
          const response = await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup) });
          expect(response.status, JSON.stringify(response.body)).toBe(200);
          return response.body.data.id as string;
        }),
        ...Array.from(
          { length: 10 },
          async () => (await createThreadDirectly(principal, threadBody(markup) as unknown as CreateThreadInput)).id as string,
        ),
      ]);
      ids.push(...made);
    }
    const log = await readLog(org.workspaceKey, markup.id);
    expect(seqs(log)).toEqual(oneTo(41));
    expect(
      log
        .slice(1)
        .map((entry) => entry.event.data.comment.id)
        .sort(),
    ).toEqual(ids.sort());
  });

  it('gives creation, comment, reply, edit, resolve, reopen, move and read-only changes consecutive seqs, in the order they committed', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const markup = await newMarkup(org);
    const thread = await createThread(org.workspaceKey, markup);
    const answer = await reply(org.workspaceKey, thread.id, { content: 'A reply' });
    const steps = [
      await call('PATCH', `/messages/${answer.id}`, { key: org.workspaceKey, body: { content: 'An edited reply' } }),
      await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey }),
      await call('POST', `/threads/${thread.id}/unresolve`, { key: org.workspaceKey }),
      await call('PATCH', `/threads/${thread.id}/move-pin`, {
        key: org.workspaceKey,
        body: { viewportXPercentage: 70, viewportYPercentage: 80 },
      }),
      await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } }),
    ];
    expect(steps.map((step) => step.status)).toEqual(steps.map(() => 200));

    const log = await readLog(org.workspaceKey, markup.id, 3);
    expect(log.map((entry) => [entry.seq, entry.event.type])).toEqual([
      [1, 'markup_created'],
      [2, 'comment_created'],
      [3, 'comment_reply_created'],
      [4, 'comment_updated'],
      [5, 'comment_resolved'],
      [6, 'comment_unresolved'],
      [7, 'comment_updated'],
      [8, 'set_project_read_only'],
    ]);
    // Each entry's event is the webhook body: the envelope with the markup it is about.
    for (const { event } of log) {
      expect(Object.keys(event)).toEqual(['id', 'type', 'workspaceId', 'createdAt', 'data']);
      expect(event.workspaceId).toBe(org.workspaceId);
      expect(event.data.markup.id).toBe(markup.id);
    }
    expect(log[2]!.event.data.message.id).toBe(answer.id);
    // The outbox items (what the table's stream hands the webhook and live fan-outs) carry the same seqs.
    const recorded = (await listEvents(org.workspaceId)).filter((event) => event.markupId === markup.id);
    expect(recorded.map((event) => [event.seq, event.id])).toEqual(log.map((entry) => [entry.seq, entry.event.id]));
    // Read again: the same bodies (frozen at the first read).
    expect(await readLog(org.workspaceKey, markup.id)).toEqual(log);
  });

  it('records markup_ready of a converted file markup right after markup_created', async () => {
    const org = await makeOrganization();
    const created = await postFileMarkup(org.workspaceKey, fileForm(await tiffBytes(), 'scan.tiff', 'image/tiff'), {
      workspaceId: org.workspaceId,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const markupId = created.body.data.id as string;
    const log = await eventually(
      () => readLog(org.workspaceKey, markupId),
      (entries) => entries.length >= 2,
    );
    expect(log.map((entry) => [entry.seq, entry.event.type])).toEqual([
      [1, 'markup_created'],
      [2, 'markup_ready'],
    ]);
  });

  it('pages by after and limit: every entry exactly once, oldest first, hasMore and nextCursor only while more follow', async () => {
    const org = await makeOrganization();
    const markup = await newMarkup(org);
    for (let i = 0; i < 6; i += 1) await createThread(org.workspaceKey, markup);
    const all = await readPage(org.workspaceKey, markup.id);
    expect(seqs(all.data)).toEqual(oneTo(7));
    expect(all).toMatchObject({ hasMore: false, nextCursor: null });

    for (const limit of [1, 2, 3, 7]) expect(seqs(await readLog(org.workspaceKey, markup.id, limit))).toEqual(oneTo(7));
    const middle = await readPage(org.workspaceKey, markup.id, '?after=2&limit=3');
    expect(seqs(middle.data)).toEqual([3, 4, 5]);
    expect(middle).toMatchObject({ hasMore: true, nextCursor: '5' });
    const last = await readPage(org.workspaceKey, markup.id, '?after=5&limit=2');
    expect(seqs(last.data)).toEqual([6, 7]);
    expect(last).toMatchObject({ hasMore: false, nextCursor: null });
    expect(await readPage(org.workspaceKey, markup.id, '?after=7')).toEqual({ data: [], hasMore: false, nextCursor: null });
    expect(await readPage(org.workspaceKey, markup.id, '?after=1000')).toEqual({ data: [], hasMore: false, nextCursor: null });
    // The entries are the same whichever page they came on.
    expect((await readLog(org.workspaceKey, markup.id, 2)).map((entry) => entry.event.id)).toEqual(all.data.map((entry) => entry.event.id));
  });

  it('starts each of 50 markups created by one bulk request at seq 1 with markup_created', async () => {
    const org = await makeOrganization();
    const response = await call('POST', '/markups/bulk/from-url', {
      key: org.workspaceKey,
      body: { items: Array.from({ length: 50 }, (_, i) => ({ url: `https://bulk.example/${i}` })) },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(204);
    const list = await call('GET', '/markups?limit=50', { key: org.workspaceKey });
    const ids = (list.body.data.data as { id: string }[]).map((markup) => markup.id);
    expect(ids).toHaveLength(50);
    const logs = await Promise.all(ids.map((id) => readPage(org.workspaceKey, id)));
    for (const [index, log] of logs.entries()) {
      expect(log.data.map((entry) => [entry.seq, entry.event.type, entry.event.data.markup.id])).toEqual([
        [1, 'markup_created', ids[index]],
      ]);
    }
    // One EventBatch in the outbox, each of its events with seq 1.
    const recorded = await listEvents(org.workspaceId);
    expect(recorded.map((event) => [event.markupId, event.seq]).sort()).toEqual(ids.map((id) => [id, 1]).sort());
    // The next event of a bulk-made markup follows on at 2.
    const first = asMarkup((await call('GET', `/markups/${ids[0]}`, { key: org.workspaceKey })).body.data);
    await createThread(org.workspaceKey, first);
    expect((await readPage(org.workspaceKey, first.id)).data.map((entry) => [entry.seq, entry.event.type])).toEqual([
      [1, 'markup_created'],
      [2, 'comment_created'],
    ]);
  });

  it.each([
    ['after=-1'],
    ['after=abc'],
    ['after=1.5'],
    ['after='],
    ['limit=0'],
    ['limit=101'],
    ['limit=x'],
    ['after=99999999999999999999'],
  ])('answers 400 for %s', async (query) => {
    const org = await makeOrganization();
    const markup = await newMarkup(org);
    const response = await call('GET', eventsPath(markup.id, `?${query}`), { key: org.workspaceKey });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.type).toBeDefined();
  });

  it('is authorized like GET /markups/{id}: another workspace, another organization, a deleted markup, an unknown id', async () => {
    const org = await makeOrganization();
    const markup = await newMarkup(org);
    const other = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const elsewhere = asMarkup(await createMarkup(org.orgKey, { url: 'https://example.com/elsewhere', workspaceId: second.id }));

    for (const [key, id] of [
      [org.workspaceKey, elsewhere.id],
      [other.workspaceKey, markup.id],
      [org.workspaceKey, randomUUID()],
    ] as const) {
      const [events, read] = await Promise.all([call('GET', eventsPath(id), { key }), call('GET', `/markups/${id}`, { key })]);
      expect(events.status).toBe(read.status);
      expect(events.status).not.toBe(200);
    }
    expect((await call('GET', eventsPath(randomUUID()), { key: org.workspaceKey })).status).toBe(404);
    expect((await call('GET', eventsPath('not-a-uuid'), { key: org.workspaceKey })).status).toBe(400);
    expect((await call('GET', eventsPath(elsewhere.id), { key: org.orgKey })).status).toBe(200);

    expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(204);
    expect((await call('GET', eventsPath(markup.id), { key: org.workspaceKey })).status).toBe(404);
  });

  it("lets an end user's token bound to one markup read that markup's log and no other", async () => {
    const org = await makeOrganization();
    const mine = await newMarkup(org);
    const theirs = await newMarkup(org);
    const token = await endUserToken({
      organizationId: org.organizationId,
      workspaceId: org.workspaceId,
      markupId: mine.id,
      markupRole: 'project:viewer',
    });

    const own = await call('GET', eventsPath(mine.id), { key: token });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(seqs(own.body.data.data)).toEqual([1]);
    const refused = await call('GET', eventsPath(theirs.id), { key: token });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).not.toContain('markup_created');
  });
});
