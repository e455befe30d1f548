import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as threadsHandler } from '../../functions/threads/handler.js';
import { threadsRoutes } from '../../functions/threads/routes.js';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getCursorKey } from '../../shared/db/core/cursor-keys.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { markupPartition } from '../../shared/db/markup-records.js';
import { messageReferenceKey } from '../../shared/db/messages.js';
import { queryPrefix } from '../../shared/db/core/paging.js';
import { indexPartition, leafOf, pageCopyPartition } from '../../shared/db/thread-index.js';
import { threadReferenceKey } from '../../shared/db/threads.js';
import { THREAD_ORDERS } from '../../shared/domain/comments/thread-selection.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call, makeOrganization } from '../support/api.js';
import { countRequests, type Counted, type InvokeResponse, invokeHandler } from '../support/request-count.js';
import { legacyMarkItem, seedConversation, seedText } from '../support/thread-seed.js';
import { timeOrderedId } from '../../shared/db/core/ids.js';
import { batchPut } from '../../shared/db/core/transact.js';
import { createThread, DESKTOP, makeTypedMarkup, MOBILE, reply, TABLET } from '../support/threads.js';

/**
 * A page of GET /threads costs the same DynamoDB requests and bytes on a markup of 50 threads as
 * on one of 5,000 (issue 13): the counters (GetItem), one Query of at most `limit + 1` index keys
 * per selected leaf, the page's threads and their messages by key (BatchGet), the caller's read
 * marks on the page (one Query of their range) and its authors (BatchGet) — never the whole conversation.
 *
 * The gateway's handlers run in the process that started the stack (vitest's global setup), not
 * in this worker, so these tests hand requests to the threads handler here, where the document
 * client they use (`getDb()`) carries the counter.
 */

const threads = { name: 'threads', routes: threadsRoutes, handler: threadsHandler };

interface Author {
  userId: string;
  key: string;
}

interface Org {
  organizationId: string;
  workspaceId: string;
  workspaceKey: string;
  workspaceKeyUserId: string;
}

/** What a markup holds, and what the caller has read of it. */
interface Seeded {
  markup: MarkupRecord;
  /** Threads created through the API (the last two numbers). */
  apiThreadIds: string[];
  seededThreadIds: string[];
  /** Seeded threads the caller marked read after their last message. */
  readByCaller: Set<string>;
}

let org: Org;
let authors: Author[];

async function listThreads(
  markupId: string,
  query: Record<string, string | number | boolean | undefined> = {},
): Promise<Counted<InvokeResponse>> {
  return countRequests(() => invokeHandler(threads, 'GET', '/threads', { key: org.workspaceKey, query: { markupId, ...query } }));
}

async function getThread(threadId: string): Promise<Counted<InvokeResponse>> {
  return countRequests(() => invokeHandler(threads, 'GET', `/threads/${threadId}`, { key: org.workspaceKey }));
}

/** Queries of the whole conversation (the old layout's read) among a listing's calls. */
const conversationReads = (counted: Counted<unknown>) =>
  counted.calls.filter((c) => c.command === 'QueryCommand' && c.input.ExpressionAttributeValues?.[':prefix'] === 'THREAD#').length;

/**
 * The most bytes a page on a large markup may read beyond the same page on a small one: the index
 * keys of `leaves` leaves, `limit + 1` each (about 130 bytes a key as DynamoDB answers it), and
 * longer thread numbers in the messages' text.
 */
const mergeSlack = (leaves: number, limit: number) => leaves * (limit + 1) * 200 + 4096;

/**
 * A webpage markup with `total` threads: `total - 2` written straight to the table with the thread
 * index (thousands through the API would take minutes), then two through the API. Seeded threads
 * have `messages` messages from three authors in turn, rotate over the three view modes, and every
 * seventh is resolved; the caller marked every third one read after its last message.
 */
async function seedMarkup(total: number, messages = 3): Promise<Seeded> {
  const markup = await makeTypedMarkup(org, 'webpage');
  const [caller, second, third] = authors as [Author, Author, Author];
  const seeded = await seedConversation(markup, {
    count: total - 2,
    authorIds: authors.map((author) => author.userId),
    messagesPerThread: messages,
    readBy: caller.userId,
    viewModeIds: [DESKTOP, TABLET, MOBILE],
  });
  const first = await createThread(caller.key, markup);
  await reply(second.key, first.id, { content: seedText('A reply') });
  const other = await createThread(second.key, markup);
  await reply(third.key, other.id, { content: seedText('A reply') });
  await reply(caller.key, other.id, { content: seedText('Another reply') });
  const readByCaller = new Set(seeded.filter((entry) => entry.thread.number % 3 === 0).map((entry) => entry.thread.id));
  return { markup, apiThreadIds: [first.id, other.id], seededThreadIds: seeded.map((entry) => entry.thread.id), readByCaller };
}

/** The shape of a JSON value: keys and value types, recursively; arrays by their first element. */
function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as object)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, v]) => [name, shapeOf(v)]),
    );
  return typeof value;
}

/** Attribute names of a stored item, sorted. */
async function storedAttributes(Key: Record<string, string>): Promise<string[]> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key, ConsistentRead: true }));
  if (!result.Item) throw new Error(`no item at ${JSON.stringify(Key)}`);
  // A message's mark is an attribute named after the message (`m:<messageId>`).
  return Object.keys(result.Item)
    .map((name) => (name.startsWith('m:') ? 'm:<messageId>' : name))
    .sort();
}

describe('a page of threads costs the same DynamoDB requests and bytes whatever the markup holds', () => {
  let small: Seeded;
  let large: Seeded;

  beforeAll(async () => {
    org = await makeOrganization();
    const contributors = await Promise.all(
      ['second', 'third'].map((name) =>
        createWorkspaceKey(org.workspaceId, { email: `${name}-${randomUUID()}@example.com`, role: 'contributor' }),
      ),
    );
    authors = [
      { userId: org.workspaceKeyUserId, key: org.workspaceKey },
      ...contributors.map((issued) => ({ userId: issued.userId, key: issued.apiKey })),
    ];
    // The cursor key is read once per process (a cold Lambda reads it on its first list); warm it
    // so every counted request below is a warm one.
    await getCursorKey();
    [small, large] = await Promise.all([seedMarkup(50), seedMarkup(5000)]);
  }, 300_000);

  it('counts the calls of a handler run in this process on the client it uses', async () => {
    const direct = await countRequests(() =>
      getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: threadReferenceKey(randomUUID()) })),
    );
    expect(direct.counts).toEqual({ GetItemCommand: 1 });
    expect(direct.bytes).toBeGreaterThan(0);

    const unknown = await getThread(randomUUID());

    expect(unknown.result.status).toBe(404);
    // The API key, then the thread reference that is not there.
    expect(unknown.calls.map((c) => c.command)).toEqual(['GetItemCommand', 'GetItemCommand']);
    expect(unknown.calls[1]!.input.Key).toMatchObject({ SK: 'THREAD' });
  });

  it('stores and answers seeded threads as the API does', async () => {
    const [apiThreadId] = small.apiThreadIds;
    const seededId = small.seededThreadIds[0]!;
    const viaApi = await call('GET', `/threads/${apiThreadId}`, { key: org.workspaceKey });
    const seeded = await call('GET', `/threads/${seededId}`, { key: org.workspaceKey });

    expect(viaApi.status).toBe(200);
    expect(seeded.status).toBe(200);
    expect(shapeOf(seeded.body.data)).toEqual(shapeOf(viaApi.body.data));
    expect(seeded.body.data.messages).toHaveLength(3);

    const apiThread = viaApi.body.data;
    const seededThread = seeded.body.data;
    const pairs: [Record<string, string>, Record<string, string>][] = [
      [
        { PK: markupPartition(small.markup.id), SK: `THREAD#${apiThread.id}` },
        { PK: markupPartition(small.markup.id), SK: `THREAD#${seededThread.id}` },
      ],
      [threadReferenceKey(apiThread.id), threadReferenceKey(seededThread.id)],
      [
        { PK: markupPartition(small.markup.id), SK: `THREAD#${apiThread.id}#MSG#${apiThread.messages[1].id}` },
        { PK: markupPartition(small.markup.id), SK: `THREAD#${seededThread.id}#MSG#${seededThread.messages[1].id}` },
      ],
      [messageReferenceKey(apiThread.messages[1].id), messageReferenceKey(seededThread.messages[1].id)],
      [
        { PK: markupPartition(small.markup.id), SK: `READ#${apiThread.messages[1].user.id}#${apiThread.id}` },
        { PK: markupPartition(small.markup.id), SK: `READ#${seededThread.messages[1].user.id}#${seededThread.id}` },
      ],
    ];
    for (const [apiKey, seededKey] of pairs) expect(await storedAttributes(seededKey)).toEqual(await storedAttributes(apiKey));
    const pinIndex = async (thread: { resolved: boolean; viewModeId?: string }) =>
      queryPrefix(indexPartition(small.markup.id, 'pin', leafOf(thread.resolved, thread.viewModeId || undefined)));
    const seededIndex = (await pinIndex(seededThread)).find((item) => item.threadId === seededThread.id)!;
    const apiIndex = (await pinIndex(apiThread)).find((item) => item.threadId === apiThread.id)!;
    expect(Object.keys(seededIndex).sort()).toEqual(Object.keys(apiIndex).sort());
  });

  it('answers a page of 50 on 5,000 threads with the requests and bytes of a page on 50, never reading the conversation', async () => {
    const fifty = await listThreads(small.markup.id, { limit: 50 });
    const fiveThousand = await listThreads(large.markup.id, { limit: 50 });

    expect(fifty.result.status).toBe(200);
    expect(fiveThousand.result.status).toBe(200);
    expect(fifty.result.body.data).toMatchObject({ total: 50, offset: 0, cursorId: null });
    expect(fiveThousand.result.body.data).toMatchObject({ total: 5000, offset: 0, cursorId: expect.any(String) });
    const listed = fiveThousand.result.body.data.threads as any[];
    expect(listed.map((thread) => thread.number)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(new Set(listed.flatMap((thread) => thread.messages.map((message: any) => message.user.id)))).toEqual(
      new Set(authors.map((a) => a.userId)),
    );
    expect(
      listed.filter((thread) => large.readByCaller.has(thread.id)).every((thread) => thread.read && thread.unreadMessageCount === 0),
    ).toBe(true);
    expect(listed.filter((thread) => !large.readByCaller.has(thread.id)).every((thread) => !thread.read)).toBe(true);

    // The API key, the markup, its workspace and the index counters (GetItem); the page's threads
    // from their page copies, each with its copy of its messages (one Query of 51, in pin order
    // across every leaf); the caller's marks on them (threads created one after another: one Query
    // of the range their marks span), then the authors (one BatchGet): the old layout's 7 calls.
    const expected = { GetItemCommand: 4, QueryCommand: 1 + 1, BatchGetItemCommand: 1 };
    expect(fifty.counts).toEqual(expected);
    expect(fiveThousand.counts).toEqual(expected);
    const copies = fiveThousand.calls.find((c) => c.command === 'QueryCommand' && !c.input.KeyConditionExpression?.includes('BETWEEN'));
    expect(copies?.input).toMatchObject({ ExpressionAttributeValues: { ':pk': pageCopyPartition(large.markup.id) }, Limit: 51 });
    const marks = fiveThousand.calls.filter((c) => c.command === 'QueryCommand' && c.input.KeyConditionExpression?.includes('BETWEEN'));
    expect(marks).toHaveLength(1);
    expect(marks[0]!.input.Limit).toBe(100);
    expect(conversationReads(fiveThousand)).toBe(0);
    // Bytes: the same threads' worth, plus at most the index keys the merge reads beyond the page
    // (each leaf gives up to 51 where the small markup's hold fewer): a constant, not the markup.
    expect(fiveThousand.bytes - fifty.bytes).toBeLessThanOrEqual(mergeSlack(6, 50));
    expect(fiveThousand.bytes).toBeGreaterThanOrEqual(fifty.bytes * 0.9);
  });

  const FILTERS: Record<string, unknown>[] = [
    {},
    { resolved: false },
    { resolved: true },
    { viewMode: 'tablet' },
    { viewMode: MOBILE },
    { resolved: true, viewMode: 'mobile' },
  ];
  it.each(THREAD_ORDERS)('costs the same in %s order, with and without resolved and viewMode, on 50 and 5,000 threads', async (order) => {
    for (const filter of FILTERS) {
      const query = { order, limit: 2, ...filter } as Record<string, string | number | boolean>;
      const smallPage = await listThreads(small.markup.id, query);
      const largePage = await listThreads(large.markup.id, query);
      expect(smallPage.result.status).toBe(200);
      expect(largePage.result.status).toBe(200);
      expect(smallPage.result.body.data.threads).toHaveLength(2);
      expect(largePage.result.body.data.threads).toHaveLength(2);
      expect(largePage.counts).toEqual(smallPage.counts);
      expect(largePage.bytes - smallPage.bytes).toBeLessThanOrEqual(mergeSlack(6, 2));
      expect(conversationReads(largePage)).toBe(0);
    }
  });

  it('pages through 5,000 threads in activity order following cursorId with the same calls on every page', async () => {
    const seen = new Set<number>();
    let cursorId: string | undefined;
    let previous: Counted<InvokeResponse> | undefined;
    let lastActivity = Number.POSITIVE_INFINITY;
    for (let page = 0; page < 5; page += 1) {
      const counted = await listThreads(large.markup.id, { order: 'activity', limit: 50, cursorId });
      expect(counted.result.status).toBe(200);
      for (const thread of counted.result.body.data.threads) {
        expect(seen.has(thread.number)).toBe(false);
        expect(thread.lastActivityAt).toBeLessThanOrEqual(lastActivity);
        lastActivity = thread.lastActivityAt;
        seen.add(thread.number);
      }
      expect(counted.result.body.data.total).toBe(5000);
      if (previous) expect(counted.counts).toEqual(previous.counts);
      previous = counted;
      cursorId = counted.result.body.data.cursorId;
    }
    expect(seen.size).toBe(250);
    // The two API threads were active last (the reply on 5,000 latest), then the seeded ones from the highest number down.
    expect([...seen].slice(0, 4)).toEqual([5000, 4999, 4998, 4997]);
  });

  it.each(['pin_asc', 'pin_desc'])(
    'pages through 5,000 threads in %s order from the page copies following cursorId, as the index lists them by offset',
    async (order) => {
      let cursorId: string | undefined;
      for (let page = 0; page < 3; page += 1) {
        const copied = await listThreads(large.markup.id, { order, limit: 50, cursorId });
        const indexed = await listThreads(large.markup.id, { order, limit: 50, offset: page * 50 });
        expect(copied.result.status).toBe(200);
        expect(copied.counts).toEqual({ GetItemCommand: 4, QueryCommand: 2, BatchGetItemCommand: 1 });
        // An offset reads the index, one Query a leaf (the first page, offset 0, reads the copies too).
        if (page > 0) expect(indexed.counts.QueryCommand).toBeGreaterThan(2);
        const numbers = copied.result.body.data.threads.map((thread: any) => thread.number);
        expect(numbers).toEqual(Array.from({ length: 50 }, (_, i) => (order === 'pin_asc' ? page * 50 + i + 1 : 5000 - page * 50 - i)));
        expect(copied.result.body.data.threads).toEqual(indexed.result.body.data.threads);
        expect(copied.result.body.data.total).toBe(5000);
        cursorId = copied.result.body.data.cursorId;
      }
    },
  );

  it('opens the page of a thread deep in the list by withThreadOrMessageId and by offset', async () => {
    const target = large.seededThreadIds[3999]!; // number 4000
    const byId = await listThreads(large.markup.id, { limit: 50, withThreadOrMessageId: target });
    const byOffset = await listThreads(large.markup.id, { limit: 50, offset: 3950 });

    expect(byId.result.status).toBe(200);
    expect(byId.result.body.data.offset).toBe(3950);
    expect(byId.result.body.data.threads.map((thread: any) => thread.id)).toContain(target);
    expect(byOffset.result.body.data.threads.map((thread: any) => thread.number)).toEqual(
      byId.result.body.data.threads.map((thread: any) => thread.number),
    );
    expect(conversationReads(byId)).toBe(0);
  });

  it('reads the marks of a page whose range holds more than twice the page by key past where the range read stopped, with the same read state', async () => {
    const markup = await seedMarkup(60);
    const [caller] = authors as [Author];
    const page = async () => listThreads(markup.markup.id, { limit: 50 });
    const before = await page();
    const stateOf = (counted: Counted<InvokeResponse>) =>
      (counted.result.body.data.threads as any[]).map((thread) => [thread.number, thread.read, thread.unreadMessageCount]);
    expect(stateOf(before).filter(([, read]) => read)).toHaveLength(16);

    // 150 stray items of the caller's keyed between the first thread's mark and the second's (as a
    // legacy message mark of another thread would be): the range read stops in them.
    const first = await call('GET', `/threads/${markup.seededThreadIds[0]!}`, { key: org.workspaceKey });
    const other = markup.seededThreadIds[55]!;
    const strays = Array.from({ length: 150 }, () => {
      const id = timeOrderedId(first.body.data.createdAt + 1);
      return legacyMarkItem(markup.markup.id, {
        userId: caller.userId,
        subject: 'message',
        subjectId: id,
        threadId: other,
        seenRevision: 1,
        seenAt: first.body.data.createdAt,
      });
    });
    await batchPut(strays);
    const after = await page();

    expect(after.result.body.data.threads).toEqual(before.result.body.data.threads);
    expect(stateOf(after)).toEqual(stateOf(before));
    // The range read (100 items, the first thread's mark and 99 strays), then the 49 other threads' marks by key.
    expect(after.counts).toEqual({ ...before.counts, BatchGetItemCommand: before.counts.BatchGetItemCommand! + 1 });
    const byKey = after.calls.filter((c) => c.command === 'BatchGetItemCommand').map((c) => Object.values(c.input.RequestItems)[0] as any);
    expect(
      byKey.some((request) => request.Keys.length === 49 && request.Keys.every((key: any) => key.SK.startsWith(`READ#${caller.userId}#`))),
    ).toBe(true);
  });

  it('reads a thread of 20 messages with the calls of a thread of 2', async () => {
    const detail = await seedMarkup(3, 20);
    const [shortId] = detail.apiThreadIds;
    const longId = detail.seededThreadIds[0]!;

    const short = await getThread(shortId!);
    const long = await getThread(longId);

    expect(short.result.status).toBe(200);
    expect(long.result.status).toBe(200);
    expect(short.result.body.data.messages).toHaveLength(2);
    expect(long.result.body.data.messages).toHaveLength(20);
    expect(new Set(long.result.body.data.messages.map((message: any) => message.user.name))).not.toContain('Former user');
    // The API key, the thread reference, the markup and its workspace (GetItem; a plain key acts as
    // owner without a membership read); the thread with its messages (Query); the caller's marks on
    // the thread and its messages and the authors (BatchGetItem each, up to 100 keys).
    const expected = { GetItemCommand: 4, QueryCommand: 1, BatchGetItemCommand: 2 };
    expect(short.counts).toEqual(expected);
    expect(long.counts).toEqual(expected);
  });
});
