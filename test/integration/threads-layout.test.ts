import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as threadsHandler } from '../../functions/threads/handler.js';
import { threadsRoutes } from '../../functions/threads/routes.js';
import { itemKey, type MarkupRecord } from '../../shared/db/items.js';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../../shared/clients.js';
import { batchDelete, batchGet, batchPut, put, transact } from '../../shared/db/core/transact.js';
import { foldLegacyReadMarks, readMarkKey } from '../../shared/db/read-marks.js';
import { getConfig } from '../../shared/config.js';
import { toMessageItem, toMessageReferenceItem } from '../../shared/db/messages.js';
import { armFault, installFaultHook } from '../../shared/db/core/faults.js';
import { markupPartition } from '../../shared/db/markup-records.js';
import { queryPrefix } from '../../shared/db/core/paging.js';
import {
  getThreadIndexState,
  indexItemKeysOf,
  indexItemsOf,
  leafOf,
  pageCopyPartition,
  pageCopyRecord,
  THREAD_INDEX_LAYOUT,
  threadIndexStateKey,
} from '../../shared/db/thread-index.js';
import { backfillThreadIndex } from '../../shared/db/thread-index-backfill.js';
import { getConversation, threadKey, threadReferenceKey, threadSequenceKey } from '../../shared/db/threads.js';
import { THREAD_ORDERS } from '../../shared/domain/comments/thread-selection.js';
import { call, makeOrganization, useOwnLocalStack } from '../support/api.js';
import { eventually } from '../support/polling.js';
import { runAdminAsync } from '../support/processes.js';
import { addMember } from '../support/conversations.js';
import { countRequests, invokeHandler } from '../support/request-count.js';
import { legacyMessageMarkItem, seedConversation, type SeededThread } from '../support/thread-seed.js';
import {
  BROWSER_CONTEXT,
  createThread,
  DESKTOP,
  makeTypedMarkup,
  MOBILE,
  pageCopiesOutOfStep,
  reply,
  TABLET,
  threadBody,
} from '../support/threads.js';

/**
 * Markups written before the thread index (issue 13's migration): the list reads only the index
 * (issue 33), so until `threads backfill` indexes them they list only what thread writes indexed
 * meanwhile, and after it they answer exactly as a markup written with the index. The backfill is
 * idempotent and safe beside concurrent thread writes.
 */

// `threads backfill` without --markup Scans the whole table and indexes every old markup in it.
const { dataDir } = useOwnLocalStack();
const threadsFunction = { name: 'threads', routes: threadsRoutes, handler: threadsHandler };

interface Org {
  organizationId: string;
  workspaceId: string;
  workspaceKey: string;
  workspaceKeyUserId: string;
}

let org: Org;

const QUERIES = THREAD_ORDERS.flatMap((order): Record<string, string | number | boolean>[] => [
  { order, limit: 50 },
  { order, limit: 50, resolved: true },
  { order, limit: 50, resolved: false, viewMode: 'tablet' },
  { order, limit: 50, viewMode: MOBILE },
]);

/** Thread numbers and totals of every order and filter, and the numbers of a walk by cursor. */
async function answersOf(markupId: string): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (const query of QUERIES) {
    const response = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId, ...query } });
    expect(response.status).toBe(200);
    answers.push({
      query,
      total: response.body.data.total,
      numbers: response.body.data.threads.map((thread: any) => [thread.number, thread.read, thread.unreadMessageCount]),
    });
  }
  const walked: number[] = [];
  let cursorId: string | undefined;
  do {
    const response = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId, order: 'pin_desc', limit: 7, cursorId } });
    walked.push(...response.body.data.threads.map((thread: any) => thread.number));
    cursorId = response.body.data.cursorId ?? undefined;
  } while (cursorId);
  answers.push(walked);
  return answers;
}

/** A markup of 30 threads in the old layout (no index items, no counters), or with `layout: 'current'` the same written with the index. */
async function oldMarkup(layout: 'old' | 'current' = 'old'): Promise<{ markup: MarkupRecord; seeded: SeededThread[] }> {
  const markup = await makeTypedMarkup(org, 'webpage');
  const seeded = await seedConversation(markup, {
    count: 30,
    authorIds: [org.workspaceKeyUserId],
    layout,
    viewModeIds: [DESKTOP, TABLET, MOBILE],
    readBy: org.workspaceKeyUserId,
  });
  return { markup, seeded };
}

/** A markup of `count` threads in the old layout on two view modes, and the leaves they are in. */
async function unindexedMarkup(count: number): Promise<{ markup: MarkupRecord; seeded: SeededThread[]; leaves: string[] }> {
  const markup = await makeTypedMarkup(org, 'webpage');
  const seeded = await seedConversation(markup, {
    count,
    authorIds: [org.workspaceKeyUserId],
    layout: 'old',
    viewModeIds: [DESKTOP, TABLET],
  });
  return { markup, seeded, leaves: [...new Set(seeded.map(({ thread }) => leafOf(thread.resolved, thread.viewModeId)))] };
}

/** The thread numbers and total of the default page. */
async function defaultPage(markupId: string): Promise<{ total: number; numbers: number[] }> {
  const { data } = (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId, limit: 50 } })).body;
  return { total: data.total, numbers: data.threads.map((thread: any) => thread.number) };
}

/** The counters as the conversation says they should be. */
async function expectedCounts(markupId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const thread of (await getConversation(markupId)).threads)
    counts.set(leafOf(thread.resolved, thread.viewModeId), (counts.get(leafOf(thread.resolved, thread.viewModeId)) ?? 0) + 1);
  return counts;
}

/**
 * Runs `run` with `step` taken once, just before the first command of this worker's DynamoDB client
 * whose name matches `command` and whose input (as JSON) holds each of `holding`: another writer's
 * step, or a crash (a step that throws), at an exact point of a request. Answers whether it was taken.
 */
async function withStepBefore(command: RegExp, holding: string[], step: () => Promise<void>, run: () => Promise<void>): Promise<boolean> {
  const name = `step-${randomUUID()}`;
  let taken = false;
  getDb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = JSON.stringify(args.input);
      if (!taken && command.test(context.commandName ?? '') && holding.every((part) => input.includes(part))) {
        taken = true;
        await step();
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await run();
  } finally {
    getDb().middlewareStack.remove(name);
  }
  return taken;
}

describe('markups in the old layout', () => {
  beforeAll(async () => {
    org = await makeOrganization();
  });

  it('a markup whose first thread is created now starts in the indexed layout', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    await createThread(org.workspaceKey, markup);

    expect((await getThreadIndexState(markup.id)).layout).toBe(THREAD_INDEX_LAYOUT);
  });

  it('a markup whose first thread creation dies after drawing its number still starts in the indexed layout, and lists its next thread', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    // The first creation dies at its commit (as a process killed there would): number 1 is drawn, no thread is written.
    const died = await withStepBefore(
      /TransactWrite/,
      ['"entity":"Thread"', markup.id],
      async () => {
        throw new Error('the process died at its commit');
      },
      async () => {
        const first = await invokeHandler(threadsFunction, 'POST', '/threads', { key: org.workspaceKey, body: threadBody(markup) });
        expect(first.status).toBe(500);
      },
    );
    expect(died).toBe(true);

    const second = await createThread(org.workspaceKey, markup);
    expect(second.number).toBe(2);
    expect((await getThreadIndexState(markup.id)).layout).toBe(THREAD_INDEX_LAYOUT);
    const listed = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } });
    expect(listed.body.data.threads.map((thread: any) => thread.number)).toEqual([2]);
    expect(listed.body.data.total).toBe(1);
  });

  it('a markup deleted while its first thread is created answers 404 and gets no thread counter or index state back', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    // The markup goes after the creation read it, just before the creation draws its number.
    const deleted = await withStepBefore(
      /UpdateItem/,
      ['THREADSEQ', markup.id],
      async () => void (await getDb().send(new DeleteCommand({ TableName: getConfig().tableName, Key: itemKey(markup.id) }))),
      async () => {
        const created = await invokeHandler(threadsFunction, 'POST', '/threads', { key: org.workspaceKey, body: threadBody(markup) });
        expect(created.status, JSON.stringify(created.body)).toBe(404);
      },
    );
    expect(deleted).toBe(true);

    const left = await batchGet([threadSequenceKey(markup.id), threadIndexStateKey(markup.id)], { consistent: true });
    expect(left).toEqual([]);
  });

  it('lists only what thread writes indexed until `threads backfill` (admin CLI, idempotent) indexes it, then as a markup written with the index', async () => {
    const [{ markup, seeded }, twin] = await Promise.all([oldMarkup(), oldMarkup('current')]);
    expect((await getThreadIndexState(markup.id)).layout).toBeUndefined();
    // The same writes on both: a resolve moves thread 5 to another leaf (all its index items are
    // put), a reply moves thread 6 in the activity order only (its leaf's counter does not move).
    for (const { seeded: threads } of [{ seeded }, twin]) {
      expect((await call('POST', `/threads/${threads[4]!.thread.id}/resolve`, { key: org.workspaceKey })).status).toBe(200);
      await reply(org.workspaceKey, threads[5]!.thread.id, { content: 'A reply before the backfill' });
    }
    expect(await defaultPage(markup.id)).toEqual({ total: 1, numbers: [5] });

    const first = await runAdminAsync(dataDir, ['threads', 'backfill', '--markup', markup.id]);
    const again = await runAdminAsync(dataDir, ['threads', 'backfill', '--markup', markup.id]);

    expect(first.status).toBe(0);
    expect(first.json).toEqual({
      markups: [{ markupId: markup.id, threads: 30, put: 30 * 6 - 7, deleted: 0, attempts: 1, layout: THREAD_INDEX_LAYOUT }],
    });
    expect(again.json).toEqual({
      markups: [{ markupId: markup.id, threads: 30, put: 0, deleted: 0, attempts: 1, layout: THREAD_INDEX_LAYOUT }],
    });
    const state = await getThreadIndexState(markup.id);
    expect(state.layout).toBe(THREAD_INDEX_LAYOUT);
    expect(state.counts).toEqual(await expectedCounts(markup.id));
    expect(await answersOf(markup.id)).toEqual(await answersOf(twin.markup.id));

    await createThread(org.workspaceKey, markup);
    const after = (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, order: 'activity', limit: 1 } }))
      .body.data;
    expect(after).toMatchObject({ total: 31, threads: [{ number: 31 }] });
  });

  // Without --markup the backfill Scans the whole table: this file's own (useOwnLocalStack above).
  it('threads backfill without --markup indexes every markup with threads not yet indexed; an unknown markup is an error', async () => {
    const { markup } = await oldMarkup();
    await createThread(org.workspaceKey, await makeTypedMarkup(org, 'webpage'));
    const all = await runAdminAsync(dataDir, ['threads', 'backfill']);
    const unknown = await runAdminAsync(dataDir, ['threads', 'backfill', '--markup', 'no-such-markup']);

    expect(all.status).toBe(0);
    expect(all.json.markups).toContainEqual({
      markupId: markup.id,
      threads: 30,
      put: 180,
      deleted: 0,
      attempts: 1,
      layout: THREAD_INDEX_LAYOUT,
    });
    expect(all.json.alreadyIndexed).toBeGreaterThan(0);
    expect((await getThreadIndexState(markup.id)).layout).toBe(THREAD_INDEX_LAYOUT);
    expect(unknown.status).toBe(1);
    expect(JSON.parse(unknown.stderr.trim().split('\n')[0]!)).toEqual({ error: 'markup no-such-markup does not exist' });
  }, 120_000);

  it('threads backfill reports a markup that fails and goes on with the others, then exits 1; the next run finishes it', async () => {
    const [failing, other] = [await makeTypedMarkup(org, 'webpage'), await makeTypedMarkup(org, 'webpage')];
    for (const markup of [failing, other]) await seedConversation(markup, { count: 3, authorIds: [org.workspaceKeyUserId], layout: '2' });
    await armFault('backfill-before-copies', failing.id);

    const first = await runAdminAsync(dataDir, ['threads', 'backfill']);
    const second = await runAdminAsync(dataDir, ['threads', 'backfill']);

    expect(first.status, first.stderr).toBe(1);
    expect(first.json.failed).toEqual([{ markupId: failing.id, error: `injected fault at backfill-before-copies for ${failing.id}` }]);
    expect(first.json.markups).toContainEqual(expect.objectContaining({ markupId: other.id, layout: THREAD_INDEX_LAYOUT }));
    expect(second.status, second.stderr).toBe(0);
    expect(second.json.markups).toContainEqual(expect.objectContaining({ markupId: failing.id, layout: THREAD_INDEX_LAYOUT }));
    expect((await getThreadIndexState(failing.id)).layout).toBe(THREAD_INDEX_LAYOUT);
  }, 120_000);

  it('a markup indexed in layout 1 (index items in the markup partition) lists only what thread writes indexed until the backfill moves its index to layout 2 and removes the old items', async () => {
    const [markup, twin] = [await makeTypedMarkup(org, 'webpage'), await makeTypedMarkup(org, 'webpage')];
    const [seeded, twinSeeded] = await Promise.all(
      [markup, twin].map((on) =>
        seedConversation(on, {
          count: 12,
          authorIds: [org.workspaceKeyUserId],
          layout: on === twin ? 'current' : 'old',
          viewModeIds: [DESKTOP, TABLET],
        }),
      ),
    );
    // Layout 1 as the previous release wrote it: `TIX#<kind>#<leaf>#<position>` under MARKUP#<id>, and `layout: 1`.
    const legacy = seeded!.flatMap((entry) =>
      indexItemsOf(markup, entry.thread).map((item) => {
        const [, , kind, leaf] = (item.PK as string).split('#');
        return {
          PK: markupPartition(markup.id),
          SK: `TIX#${kind}#${leaf}#${item.SK as string}`,
          entity: 'ThreadIndex',
          threadId: item.threadId,
        };
      }),
    );
    const counts: Record<string, number> = {};
    for (const { thread } of seeded!)
      counts[`c:${leafOf(thread.resolved, thread.viewModeId)}`] = (counts[`c:${leafOf(thread.resolved, thread.viewModeId)}`] ?? 0) + 1;
    await batchPut([...legacy, { ...threadIndexStateKey(markup.id), entity: 'ThreadIndexState', layout: 1, writes: 0, ...counts }]);
    for (const threads of [seeded!, twinSeeded!])
      expect((await call('POST', `/threads/${threads[2]!.thread.id}/resolve`, { key: org.workspaceKey })).status).toBe(200);
    // Layout 1's counters count every thread; only the resolved one has layout 2 items yet.
    expect(await defaultPage(markup.id)).toEqual({ total: 12, numbers: [3] });

    const migrated = await runAdminAsync(dataDir, ['threads', 'backfill', '--markup', markup.id]);
    // The resolved thread's items are in layout 2 already (its write put them); the other 11 are put, layout 1's 72 removed.

    expect(migrated.json).toEqual({
      markups: [{ markupId: markup.id, threads: 12, put: 11 * 6, deleted: 12 * 6, attempts: 1, layout: THREAD_INDEX_LAYOUT }],
    });
    expect(await queryPrefix(markupPartition(markup.id), 'TIX#')).toEqual([]);
    const state = await getThreadIndexState(markup.id);
    expect(state.layout).toBe(THREAD_INDEX_LAYOUT);
    expect(state.counts).toEqual(await expectedCounts(markup.id));
    expect(await answersOf(markup.id)).toEqual(await answersOf(twin.id));
  });

  it('a layout 2 markup answers the same pages before and after the backfill moves it to the current layout: threads get copies of their messages and page copies, message marks fold into one item a reader and thread, and a page reads its threads from their page copies', async () => {
    const other = await addMember(org.workspaceId);
    const markup = await makeTypedMarkup(org, 'webpage');
    const seeded = await seedConversation(markup, {
      count: 12,
      authorIds: [org.workspaceKeyUserId, other.userId],
      layout: '2',
      viewModeIds: [DESKTOP, TABLET],
      readBy: org.workspaceKeyUserId,
    });
    expect((await getThreadIndexState(markup.id)).layout).toBe(2);
    // Writes before the backfill write today's layout beside layout 2's items: a reply (thread 2
    // keeps no copy, so only its `messageIds` move), and a mark of another's message (an attribute
    // of the caller's item for thread 3, beside that thread's legacy message marks).
    await reply(other.key, seeded[1]!.thread.id, { content: 'A reply before the backfill' });
    const othersMessage = seeded[2]!.messages.find((message) => message.userId === other.userId)!;
    expect((await call('POST', `/messages/${othersMessage.id}/read`, { key: org.workspaceKey })).status).toBe(204);
    const legacyMarks = async () =>
      (await queryPrefix(markupPartition(markup.id), 'READ#', { consistent: true })).filter((item) => item.subject === 'message');
    expect((await legacyMarks()).length).toBe(36);
    const pageOf = async () =>
      (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, limit: 50 } })).body.data;
    const before = await pageOf();
    const answersBefore = await answersOf(markup.id);
    // The caller wrote or read each of its messages: read only where they also marked the thread.
    expect(before.threads.map((thread: any) => [thread.number, thread.unreadMessageCount])).toContainEqual([3, 0]);

    const migrated = await runAdminAsync(dataDir, ['threads', 'backfill', '--markup', markup.id]);

    expect(migrated.status).toBe(0);
    expect(migrated.json.markups).toEqual([expect.objectContaining({ markupId: markup.id, threads: 12, layout: THREAD_INDEX_LAYOUT })]);
    expect((await getThreadIndexState(markup.id)).layout).toBe(THREAD_INDEX_LAYOUT);
    expect(await legacyMarks()).toEqual([]);
    const { threads, messages } = await getConversation(markup.id);
    for (const thread of threads) expect(thread.messages).toEqual(messages.get(thread.id));
    const copies = await queryPrefix(pageCopyPartition(markup.id), undefined, { consistent: true });
    expect(copies.map((copy) => pageCopyRecord(copy))).toEqual([...threads].sort((a, b) => a.number - b.number));
    expect(await pageOf()).toEqual(before);
    expect(await answersOf(markup.id)).toEqual(answersBefore);
    const counted = await countRequests(() =>
      invokeHandler(threadsFunction, 'GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, limit: 50 } }),
    );
    expect(counted.result.body.data).toEqual(before);
    // The threads (with their messages) from their page copies, one Query; the caller's marks, one key
    // a thread (threads from before time-ordered ids), then the authors.
    const batchKeys = counted.calls
      .filter((entry) => entry.command === 'BatchGetItemCommand')
      .map((entry) => Object.values(entry.input.RequestItems as Record<string, { Keys: unknown[] }>)[0]!.Keys.length);
    expect(batchKeys[0]).toBe(12);
    expect(batchKeys).toHaveLength(2);
    expect(
      counted.calls.filter((entry) => entry.command === 'QueryCommand').map((entry) => entry.input.ExpressionAttributeValues[':pk']),
    ).toEqual([pageCopyPartition(markup.id)]);
  });

  it('a layout 2 markup shows a message read by its later mark when its legacy mark is older (the mark written after the upgrade is an attribute; both are read)', async () => {
    const other = await addMember(org.workspaceId);
    const markup = await makeTypedMarkup(org, 'webpage');
    const seeded = await seedConversation(markup, { count: 12, authorIds: [org.workspaceKeyUserId, other.userId], layout: '2' });
    // Before the upgrade the caller read every message of the other writer: legacy items at their revision.
    await batchPut(
      seeded.flatMap(({ messages }) =>
        messages
          .filter((message) => message.userId === other.userId)
          .map((message) => legacyMessageMarkItem(markup.id, org.workspaceKeyUserId, message)),
      ),
    );
    // After it, the other writer edits one of them in every thread, and the caller reads it again.
    for (const { messages } of seeded) {
      const edited = messages.find((message) => message.userId === other.userId)!;
      expect(
        (await call('PATCH', `/messages/${edited.id}`, { key: other.key, body: { content: 'Edited after the upgrade' } })).status,
      ).toBe(200);
      expect((await call('POST', `/messages/${edited.id}/read`, { key: org.workspaceKey })).status).toBe(204);
    }

    const page = (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, limit: 50 } })).body.data;
    const one = (await call('GET', `/threads/${seeded[0]!.thread.id}`, { key: org.workspaceKey })).body.data;

    // Whichever of the two marks of an edited message DynamoDB answers last, the later one counts: nothing is unread.
    expect(page.threads.map((thread: any) => [thread.number, thread.unreadMessageCount])).toEqual(seeded.map((_, i) => [i + 1, 0]));
    expect(one.unreadMessageCount).toBe(0);
  });

  it('`threads backfill --markup` repairs a copy and folds marks that an older release wrote beside this one', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const created = await createThread(org.workspaceKey, markup);
    const [thread] = (await getConversation(markup.id)).threads;
    // The older release's reply: the message and its reference, `messageIds` and the revision moved
    // on the thread (its copy untouched), and the writer's mark as an item of its own.
    const at = Date.now();
    const message = {
      ...thread!.messages![0]!,
      id: randomUUID(),
      createdAt: at,
      modifiedAt: at,
      threadRevision: thread!.revision + 1,
      content: 'Old release',
    };
    const reference = { threadId: thread!.id, markupId: markup.id, workspaceId: markup.workspaceId, organizationId: markup.organizationId };
    await transact([
      put(toMessageItem(message)),
      put(toMessageReferenceItem({ ...reference, messageId: message.id })),
      {
        Update: {
          TableName: getConfig().tableName,
          Key: threadKey(markup.id, thread!.id),
          UpdateExpression: 'SET revision = :next, lastActivityAt = :at, messageIds = :ids',
          ExpressionAttributeValues: { ':next': thread!.revision + 1, ':at': at, ':ids': [...thread!.messageIds!, message.id] },
        },
      },
      put(legacyMessageMarkItem(markup.id, org.workspaceKeyUserId, message)),
    ]);
    const listed = async () =>
      (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data.threads[0];
    expect((await listed()).messages).toHaveLength(1);

    const repaired = await runAdminAsync(dataDir, ['threads', 'backfill', '--markup', markup.id]);

    expect(repaired.status).toBe(0);
    const after = await listed();
    expect(after.messages.map((entry: any) => entry.id)).toEqual([created.messages[0].id, message.id]);
    expect(after).toMatchObject({ unreadMessageCount: 0 });
    expect(
      (await queryPrefix(markupPartition(markup.id), 'READ#', { consistent: true })).filter((item) => item.subject === 'message'),
    ).toEqual([]);
    expect((await call('GET', `/threads/${thread!.id}`, { key: org.workspaceKey })).body.data).toMatchObject({ unreadMessageCount: 0 });
  });

  it('the fold keeps the later mark an older release writes during it: a legacy item is deleted only as it was read', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const [seeded] = await seedConversation(markup, { count: 1, authorIds: [org.workspaceKeyUserId], layout: '2' });
    const message = seeded!.messages[0]!;
    const legacyKey = readMarkKey(markup.id, org.workspaceKeyUserId, message.id);
    // The older release marks the message again (after an edit) while the fold runs.
    const later = legacyMessageMarkItem(markup.id, org.workspaceKeyUserId, message, {
      seenRevision: message.threadRevision + 5,
      seenAt: message.createdAt + 60_000,
    });
    const rewritten = await withStepBefore(
      /TransactWrite/,
      [`m:${message.id}`],
      async () => void (await getDb().send(new PutCommand({ TableName: getConfig().tableName, Item: later }))),
      async () => void (await foldLegacyReadMarks(markup.id)),
    );

    const [folded] = await batchGet([readMarkKey(markup.id, org.workspaceKeyUserId, message.threadId)], { consistent: true });
    expect(rewritten).toBe(true);
    expect(folded![`m:${message.id}`]).toEqual({ seenRevision: later.seenRevision, seenAt: later.seenAt });
    expect(await batchGet([legacyKey], { consistent: true })).toEqual([]);
  });

  it('a thread whose messages outgrow its copy keeps none, and its pages and reads still show every message', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const long = (n: number) => `Reply ${n}: ${'the spacing of the navigation needs another look. '.repeat(380)}`;
    const stored = () => getConversation(markup.id).then(({ threads }) => threads[0]!);
    let replies = 0;
    while ((await stored()).messages !== undefined) {
      await reply(org.workspaceKey, thread.id, { content: long(++replies) });
      expect(replies).toBeLessThan(40);
    }
    const kept = await stored();
    expect(kept.messageIds).toHaveLength(replies + 1);
    expect(replies).toBeGreaterThan(2);

    const page = (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data;
    const one = (await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data;

    expect(page.threads[0].messages.map((message: any) => message.id)).toEqual(kept.messageIds);
    expect(page.threads[0].messages.at(-1).content).toBe(long(replies));
    expect(page.threads[0]).toMatchObject({ read: true, unreadMessageCount: 0 });
    expect(one.messages.map((message: any) => message.id)).toEqual(kept.messageIds);
    // A deleted reply leaves it below the limit again: the next change gives it no copy back (it
    // keeps its `messageIds`), and the page still shows what is left.
    expect((await call('DELETE', `/messages/${kept.messageIds!.at(-1)}`, { key: org.workspaceKey })).status).toBe(204);
    const after = (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data;
    expect(after.threads[0].messages.map((message: any) => message.id)).toEqual(kept.messageIds!.slice(0, -1));
  });

  it('every write of a thread writes its page copy in the same transaction: create, reply, edit, priority, delete a message, resolve, reopen, move the pin, delete the thread, and writes racing on one thread', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const [first, second, third] = [
      await createThread(org.workspaceKey, markup),
      await createThread(org.workspaceKey, markup, { viewModeId: TABLET }),
      await createThread(org.workspaceKey, markup),
    ];
    const replied = await reply(org.workspaceKey, first.id, { content: 'A reply' });
    const ok = (response: { status: number; body: unknown }) => expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    ok(await call('PATCH', `/messages/${replied.id}`, { key: org.workspaceKey, body: { content: 'An edited reply', priority: 2 } }));
    ok(await call('PATCH', `/messages/${first.messages[0].id}`, { key: org.workspaceKey, body: { priority: 5 } }));
    await reply(org.workspaceKey, second.id, { content: 'Another reply' });
    const doomed = await reply(org.workspaceKey, second.id, { content: 'A reply to delete' });
    ok(await call('DELETE', `/messages/${doomed.id}`, { key: org.workspaceKey }));
    ok(await call('POST', `/threads/${second.id}/resolve`, { key: org.workspaceKey }));
    ok(await call('POST', `/threads/${first.id}/resolve`, { key: org.workspaceKey }));
    ok(await call('POST', `/threads/${first.id}/unresolve`, { key: org.workspaceKey }));
    ok(
      await call('PATCH', `/threads/${first.id}/move-pin`, {
        key: org.workspaceKey,
        body: {
          url: 'https://example.com/pricing',
          canonicalUrl: 'https://example.com/pricing',
          elements: [{ elementPath: 'html > body > main > button', offsetXPercentage: 80, offsetYPercentage: 20 }],
          elementParents: [
            { url: 'https://example.com/pricing', canonicalUrl: 'https://example.com/pricing', path: 'html > body > main', depth: 2 },
          ],
          browserContext: { ...BROWSER_CONTEXT, viewportWidth: 1280 },
        },
      }),
    );
    ok(await call('DELETE', `/threads/${third.id}`, { key: org.workspaceKey }));
    expect(await pageCopiesOutOfStep(markup.id)).toEqual([]);

    for (let round = 0; round < 5; round += 1) {
      await Promise.all([
        ...Array.from({ length: 6 }, (_, i) => reply(org.workspaceKey, first.id, { content: `Round ${round}, reply ${i}` })),
        call('POST', `/threads/${first.id}/${round % 2 === 0 ? 'resolve' : 'unresolve'}`, { key: org.workspaceKey }),
        call('PATCH', `/messages/${replied.id}`, { key: org.workspaceKey, body: { content: `Edited in round ${round}` } }),
      ]);
      expect(await pageCopiesOutOfStep(markup.id)).toEqual([]);
    }
    const page = (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data;
    const one = (await call('GET', `/threads/${first.id}`, { key: org.workspaceKey })).body.data;
    expect(page.threads.map((thread: any) => thread.number)).toEqual([1, 2]);
    expect(page.threads[0]).toEqual(one);
  }, 120_000);

  it("reads a page copy written as the record's own attributes (layout 4's first release), and its thread's next write stores it as one string", async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const [first, second] = [await createThread(org.workspaceKey, markup), await createThread(org.workspaceKey, markup)];
    const pageNow = async () => (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data;
    const before = await pageNow();
    const stored = await queryPrefix(pageCopyPartition(markup.id), undefined, { consistent: true });
    expect(stored.map((item) => typeof item.record)).toEqual(['string', 'string']);
    // Both copies as the first release wrote them: the record's attributes beside the key.
    for (const item of stored) {
      const { record: _record, messagesRepeatThread: _flag, ...key } = item;
      await transact([put({ ...pageCopyRecord(item), ...key })]);
    }
    expect((await queryPrefix(pageCopyPartition(markup.id), undefined, { consistent: true })).map((item) => item.record)).toEqual([
      undefined,
      undefined,
    ]);
    expect(await pageCopiesOutOfStep(markup.id)).toEqual([]);
    expect(await pageNow()).toEqual(before);

    await reply(org.workspaceKey, first.id, { content: 'Written again' });
    const after = await queryPrefix(pageCopyPartition(markup.id), undefined, { consistent: true });
    expect(after.map((item) => [item.id, typeof item.record])).toEqual([
      [first.id, 'string'],
      [second.id, 'undefined'],
    ]);
    expect(await pageCopiesOutOfStep(markup.id)).toEqual([]);
    expect((await pageNow()).threads.map((thread: any) => thread.messages.length)).toEqual([2, 1]);
  });

  it('a markup deletion that dies after its threads went lists none of them: their page copies went with them', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    for (let i = 0; i < 3; i += 1) await createThread(org.workspaceKey, markup);
    await armFault('after-conversation-deletion', markup.id);

    expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(500);
    const page = (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data;

    expect(page.threads).toEqual([]);
    expect(await pageCopiesOutOfStep(markup.id)).toEqual([]);
  });

  it('deleting a markup removes its index partitions with its threads', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const threads = [await createThread(org.workspaceKey, markup), await createThread(org.workspaceKey, markup, { viewModeId: TABLET })];
    expect((await call('POST', `/threads/${threads[0].id}/resolve`, { key: org.workspaceKey })).status).toBe(200);
    const leaves = (await getThreadIndexState(markup.id)).counted;
    expect(leaves.length).toBeGreaterThanOrEqual(3);
    // Six index items and a page copy a thread.
    expect(await indexItemKeysOf(markup.id, leaves)).toHaveLength(2 * 7);

    expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(204);

    const left = await eventually(
      async () => [...(await indexItemKeysOf(markup.id, leaves)), ...(await queryPrefix(markupPartition(markup.id)))],
      (items) => items.length === 0,
      30_000,
    );
    expect(left).toEqual([]);
  });

  it('deleting a markup never backfilled removes the index items its thread writes made', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const seeded = await seedConversation(markup, { count: 4, authorIds: [org.workspaceKeyUserId], layout: 'old', viewModeIds: [DESKTOP] });
    const thread = seeded[1]!.thread;
    // A reply moves the thread in the activity order only: its leaf is unchanged.
    await reply(org.workspaceKey, thread.id, { content: 'A reply on a markup in the old layout' });
    const leaf = leafOf(thread.resolved, thread.viewModeId);
    // Its activity index item, and its page copy.
    expect(await indexItemKeysOf(markup.id, [leaf])).toHaveLength(2);
    expect((await getThreadIndexState(markup.id)).counted).toContain(leaf);

    expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(204);

    const left = await eventually(
      async () => [...(await indexItemKeysOf(markup.id, [leaf])), ...(await queryPrefix(markupPartition(markup.id)))],
      (items) => items.length === 0,
      30_000,
    );
    expect(left).toEqual([]);
  });

  it('a backfill racing the deletion of its markup leaves no index and no counters behind (20 rounds)', async () => {
    for (let round = 0; round < 20; round += 1) {
      const { markup, leaves } = await unindexedMarkup(8);
      const [backfilled, deleted] = await Promise.all([
        backfillThreadIndex(markup),
        call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey }),
      ]);
      expect(deleted.status).toBe(204);
      expect(backfilled.markupId).toBe(markup.id);
      const left = await eventually(
        async () => [...(await indexItemKeysOf(markup.id, leaves)), ...(await queryPrefix(markupPartition(markup.id)))],
        (items) => items.length === 0,
        30_000,
      );
      expect(left).toEqual([]);
    }
  }, 180_000);

  it("a backfill attempt whose threads went before it ended (a markup deletion's first step) leaves a counter for every leaf it put items in, so the deletion finds and removes them", async () => {
    const { markup, seeded, leaves } = await unindexedMarkup(6);
    // The deletion takes the conversation first, while the markup's record is still there, and moves no `writes`.
    let fired = 0;
    const previous = installFaultHook(async (point, subject) => {
      if (point !== 'backfill-before-copies' || subject !== markup.id || fired++ > 0) return;
      await batchDelete(seeded.flatMap(({ thread }) => [threadKey(markup.id, thread.id), threadReferenceKey(thread.id)]));
    });
    try {
      const backfilled = await backfillThreadIndex(markup);
      expect(backfilled).toMatchObject({ threads: 0, attempts: 2, layout: THREAD_INDEX_LAYOUT });
    } finally {
      installFaultHook(previous);
    }
    // The first attempt's items are stray in the second (no thread has them) and every leaf it touched is counted.
    expect(await indexItemKeysOf(markup.id, leaves)).toEqual([]);
    expect((await getThreadIndexState(markup.id)).counted.sort()).toEqual([...leaves].sort());

    expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(204);
    const left = await eventually(
      async () => [...(await indexItemKeysOf(markup.id, leaves)), ...(await queryPrefix(markupPartition(markup.id), 'THREADINDEX'))],
      (items) => items.length === 0,
      30_000,
    );
    expect(left).toEqual([]);
  });

  it('a backfill racing thread writes ends with the index and counters the conversation says (20 rounds)', async () => {
    for (let round = 0; round < 20; round += 1) {
      const { markup, seeded } = await unindexedMarkup(6);
      const [a, b, c] = seeded.map((entry) => entry.thread.id);
      const [backfilled] = await Promise.all([
        backfillThreadIndex(markup),
        call('POST', `/threads/${a}/resolve`, { key: org.workspaceKey }),
        reply(org.workspaceKey, b!, { content: `Round ${round}` }),
        call('DELETE', `/threads/${c}`, { key: org.workspaceKey }),
        createThread(org.workspaceKey, markup),
      ]);
      expect(backfilled.layout).toBe(THREAD_INDEX_LAYOUT);
      const check = await backfillThreadIndex(markup);
      expect({ put: check.put, deleted: check.deleted }).toEqual({ put: 0, deleted: 0 });
      expect((await getThreadIndexState(markup.id)).counts).toEqual(await expectedCounts(markup.id));
    }
  }, 120_000);
});
