import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as threadsHandler } from '../../functions/threads/handler.js';
import { threadsRoutes } from '../../functions/threads/routes.js';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getCursorKey } from '../../shared/db/cursor-keys.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { markupPartition } from '../../shared/db/markup-records.js';
import { messageReferenceKey, toMessageItem, toMessageReferenceItem, type MessageRecord } from '../../shared/db/messages.js';
import { toReadMarkItem, type ReadMark } from '../../shared/db/read-marks.js';
import { threadReferenceKey, threadSequenceKey, toThreadItem, toThreadReferenceItem, type ThreadRecord } from '../../shared/db/threads.js';
import { queryPrefix } from '../../shared/db/paging.js';
import { batchPut } from '../../shared/db/transact.js';
import { createWorkspaceKey } from '../../shared/domain/organizations.js';
import { call, makeOrganization } from '../support/api.js';
import { countRequests, type Counted, type CountedCall, type InvokeResponse, invokeHandler } from '../support/request-count.js';
import { BROWSER_CONTEXT, createThread, delta, DESKTOP, makeTypedMarkup, reply } from '../support/threads.js';

/**
 * `listThreads` (shared/domain/comments/read-threads.ts) reads a markup's threads whole: one Query of its
 * partition answered 1 MB at a time, plus the caller's read marks and one BatchGet per 100
 * authors. So listing threads costs a fixed number of DynamoDB requests plus one per MB of
 * conversation, never one per thread or message.
 *
 * The gateway's handlers run in the process that started the stack (vitest's global setup), not
 * in this worker, so these tests hand requests to the threads handler here, where the document
 * client they use (`getDb()`) carries the counter.
 */

const threads = { name: 'threads', routes: threadsRoutes, handler: threadsHandler };
const MIB = 1024 * 1024;

/** A message long enough that 500 threads take more than one 1 MB Query page. */
const text = (label: string) => `${label}: the hero spacing looks off next to the navigation, and the call to action wraps on narrow screens. Could we check it again?`;

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
  /** Threads created through the API (numbers 1 and 2). */
  apiThreadIds: string[];
  seededThreadIds: string[];
  /** Seeded threads the caller marked read after their last message. */
  readByCaller: Set<string>;
}

let org: Org;
let authors: Author[];

async function listThreads(markupId: string, query: Record<string, string | number | undefined> = {}): Promise<Counted<InvokeResponse>> {
  return countRequests(() => invokeHandler(threads, 'GET', '/threads', { key: org.workspaceKey, query: { markupId, ...query } }));
}

async function getThread(threadId: string): Promise<Counted<InvokeResponse>> {
  return countRequests(() => invokeHandler(threads, 'GET', `/threads/${threadId}`, { key: org.workspaceKey }));
}

/** Pages of the whole-conversation Query among a listing's calls. */
const conversationPages = (calls: readonly CountedCall[]) => calls.filter((c) => c.command === 'QueryCommand' && c.input.ExpressionAttributeValues?.[':prefix'] === 'THREAD#').length;

/**
 * A thread as POST /threads writes a webpage pin, opened by the first of `messageAuthors`, with
 * the others' replies as POST /threads/:id/messages adds them (each moves `lastActivityAt` and
 * `revision`), the read marks their writers get, and with `readBy` that user's mark of the whole
 * thread after its last message.
 */
function seededThread(markup: MarkupRecord, number: number, messageAuthors: string[], at: number, readBy?: string) {
  const id = randomUUID();
  const scope = { markupId: markup.id, workspaceId: markup.workspaceId, organizationId: markup.organizationId };
  const last = at + messageAuthors.length - 1;
  const thread: ThreadRecord = {
    id,
    ...scope,
    number,
    userId: messageAuthors[0]!,
    createdAt: at,
    modifiedAt: at,
    lastActivityAt: last,
    resolved: number % 7 === 0,
    priority: null,
    revision: messageAuthors.length,
    annotations: null,
    width: null,
    height: null,
    kind: 'webpage',
    url: 'https://example.com/',
    canonicalUrl: 'https://example.com/',
    elements: [{ id: randomUUID(), createdAt: at, modifiedAt: at, path: 'html > body > h1', offsetXPercentage: 12.5, offsetYPercentage: 50 }],
    parents: [{ id: randomUUID(), createdAt: at, modifiedAt: at, path: 'html > body', depth: 1, url: 'https://example.com/', canonicalUrl: 'https://example.com/' }],
    browserContext: BROWSER_CONTEXT,
    viewModeId: DESKTOP,
    offsetXPercentage: 25,
    offsetYPercentage: 40,
  };
  const messages: MessageRecord[] = messageAuthors.map((userId, index) => {
    const content = text(`Message ${index + 1} of thread ${number}`);
    return {
      id: randomUUID(),
      threadId: id,
      ...scope,
      userId,
      createdAt: at + index,
      modifiedAt: at + index,
      modifiedBy: userId,
      threadRevision: index + 1,
      content,
      delta: delta(content),
      mentionIds: [],
      attachments: [],
      clipVideos: [],
    };
  });
  const marks = new Map<string, ReadMark>();
  const mark = (userId: string, subject: ReadMark['subject'], subjectId: string, seenRevision: number, seenAt: number) =>
    marks.set(`${userId}#${subjectId}`, { userId, subject, subjectId, threadId: id, seenRevision, seenAt });
  mark(thread.userId, 'thread', id, 1, at);
  for (const message of messages) mark(message.userId, 'message', message.id, message.threadRevision, message.createdAt);
  if (readBy) mark(readBy, 'thread', id, thread.revision, last + 1);
  const items = [
    toThreadItem(thread),
    toThreadReferenceItem({ threadId: id, ...scope }),
    ...messages.flatMap((message) => [toMessageItem(message), toMessageReferenceItem({ threadId: id, ...scope, messageId: message.id })]),
    ...[...marks.values()].map((readMark) => toReadMarkItem(markup.id, readMark)),
  ];
  return { thread, messages, items };
}

/**
 * A webpage markup with `total` threads: two through the API, the rest written straight to the
 * table (500 through the API would take minutes). Seeded threads have 2 or 3 messages from three
 * authors in turn; the caller marked every third one read after its last message.
 */
async function seedMarkup(total: number, messagesOf: (number: number) => number = (number) => 2 + (number % 2)): Promise<Seeded> {
  const markup = await makeTypedMarkup(org, 'webpage');
  const [caller, second, third] = authors as [Author, Author, Author];
  const first = await createThread(caller.key, markup);
  await reply(second.key, first.id, { content: text('A reply') });
  const other = await createThread(second.key, markup);
  await reply(third.key, other.id, { content: text('A reply') });
  await reply(caller.key, other.id, { content: text('Another reply') });

  const base = Date.now();
  const readByCaller = new Set<string>();
  const seededThreadIds: string[] = [];
  const items: Record<string, unknown>[] = [];
  for (let number = 3; number <= total; number += 1) {
    const writers = Array.from({ length: messagesOf(number) }, (_, index) => authors[(number + index) % authors.length]!.userId);
    const at = base + number * 10;
    const read = number % 3 === 0;
    const seeded = seededThread(markup, number, writers, at, read ? caller.userId : undefined);
    items.push(...seeded.items);
    seededThreadIds.push(seeded.thread.id);
    if (read) readByCaller.add(seeded.thread.id);
  }
  // The counter moves past the seeded numbers, so a thread created later through the API gets the next one.
  items.push({ ...threadSequenceKey(markup.id), entity: 'ThreadSequence', markupId: markup.id, lastNumber: total });
  await batchPut(items);
  return { markup, apiThreadIds: [first.id, other.id], seededThreadIds, readByCaller };
}

/** The shape of a JSON value: keys and value types, recursively; arrays by their first element. */
function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value as object).sort(([a], [b]) => a.localeCompare(b)).map(([name, v]) => [name, shapeOf(v)]));
  return typeof value;
}

/** Attribute names of a stored item, sorted. */
async function storedAttributes(Key: Record<string, string>): Promise<string[]> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key, ConsistentRead: true }));
  if (!result.Item) throw new Error(`no item at ${JSON.stringify(Key)}`);
  return Object.keys(result.Item).sort();
}

/** DynamoDB's item size (names plus values; numbers counted by their digits, a safe upper bound). */
function itemBytes(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(value).replace(/[-.]/g, '').length / 2) + 1;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, element) => sum + 1 + itemBytes(element), 0);
  return 3 + Object.entries(value as object).reduce((sum, [name, element]) => sum + Buffer.byteLength(name) + 1 + itemBytes(element), 0);
}

/** How many 1 MB pages a Query returns for these items: at least bytes / 1 MB, at most one more (pages end on item boundaries). */
function expectedPages(items: readonly Record<string, unknown>[]): { min: number; max: number; bytes: number } {
  const bytes = items.reduce((sum: number, item) => sum + itemBytes(item) - 3, 0);
  const min = Math.max(1, Math.ceil(bytes / MIB));
  return { min, max: min + 1, bytes };
}

describe('listing and reading threads costs a bounded number of DynamoDB requests (no N+1)', () => {
  let small: Seeded;
  let large: Seeded;

  beforeAll(async () => {
    org = await makeOrganization();
    const contributors = await Promise.all(
      ['second', 'third'].map((name) => createWorkspaceKey(org.workspaceId, { email: `${name}-${randomUUID()}@example.com`, role: 'contributor' })),
    );
    authors = [{ userId: org.workspaceKeyUserId, key: org.workspaceKey }, ...contributors.map((issued) => ({ userId: issued.userId, key: issued.apiKey }))];
    // The cursor key is read once per process (a cold Lambda reads it on its first list); warm it
    // so every counted request below is a warm one.
    await getCursorKey();
    [small, large] = await Promise.all([seedMarkup(50), seedMarkup(500)]);
  });

  it('counts the calls of a handler run in this process on the client it uses', async () => {
    const direct = await countRequests(() => getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: threadReferenceKey(randomUUID()) })));
    expect(direct.counts).toEqual({ GetItemCommand: 1 });

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
      [{ PK: markupPartition(small.markup.id), SK: `THREAD#${apiThread.id}` }, { PK: markupPartition(small.markup.id), SK: `THREAD#${seededThread.id}` }],
      [threadReferenceKey(apiThread.id), threadReferenceKey(seededThread.id)],
      [
        { PK: markupPartition(small.markup.id), SK: `THREAD#${apiThread.id}#MSG#${apiThread.messages[1].id}` },
        { PK: markupPartition(small.markup.id), SK: `THREAD#${seededThread.id}#MSG#${seededThread.messages[1].id}` },
      ],
      [messageReferenceKey(apiThread.messages[1].id), messageReferenceKey(seededThread.messages[1].id)],
      [
        { PK: markupPartition(small.markup.id), SK: `READ#${apiThread.messages[1].user.id}#${apiThread.messages[1].id}` },
        { PK: markupPartition(small.markup.id), SK: `READ#${seededThread.messages[1].user.id}#${seededThread.messages[1].id}` },
      ],
    ];
    for (const [apiKey, seededKey] of pairs) expect(await storedAttributes(seededKey)).toEqual(await storedAttributes(apiKey));
  });

  it('lists 500 threads in one page with the calls of 50, plus only the extra 1 MB pages of the conversation', async () => {
    const fifty = await listThreads(small.markup.id, { limit: 500 });
    const fiveHundred = await listThreads(large.markup.id, { limit: 500 });

    expect(fifty.result.status).toBe(200);
    expect(fiveHundred.result.status).toBe(200);
    expect(fifty.result.body.data.threads).toHaveLength(50);
    expect(fiveHundred.result.body.data).toMatchObject({ total: 500, offset: 0, cursorId: null });
    const listed = fiveHundred.result.body.data.threads as any[];
    expect(listed).toHaveLength(500);
    expect(listed.map((thread) => thread.number)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    // Every author was found by the one BatchGet, and the caller's read marks were applied.
    expect(new Set(listed.flatMap((thread) => thread.messages.map((message: any) => message.user.name)))).not.toContain('Former user');
    expect(new Set(listed.flatMap((thread) => thread.messages.map((message: any) => message.user.id)))).toEqual(new Set(authors.map((a) => a.userId)));
    expect(listed.filter((thread) => large.readByCaller.has(thread.id)).every((thread) => thread.read && thread.unreadMessageCount === 0)).toBe(true);
    expect(listed.filter((thread) => thread.number > 2 && !large.readByCaller.has(thread.id)).every((thread) => !thread.read)).toBe(true);

    // Fixed calls: the API key, the markup and its workspace (GetItem; a plain key acts as owner
    // without a membership read); the caller's read marks (Query); the page's authors (BatchGetItem).
    for (const counted of [fifty, fiveHundred]) {
      const pages = conversationPages(counted.calls);
      expect(counted.counts).toEqual({ GetItemCommand: 3, QueryCommand: pages + 1, BatchGetItemCommand: 1 });
      expect(counted.calls.find((c) => c.command === 'BatchGetItemCommand')!.input.RequestItems[getConfig().tableName].Keys).toHaveLength(3);
    }
    const smallPages = conversationPages(fifty.calls);
    const largePages = conversationPages(fiveHundred.calls);
    const expected = expectedPages(await queryPrefix(markupPartition(large.markup.id), 'THREAD#', { consistent: true }));
    expect(smallPages).toBe(1);
    expect(expected.min).toBeGreaterThan(1);
    expect(largePages).toBeGreaterThanOrEqual(expected.min);
    expect(largePages).toBeLessThanOrEqual(expected.max);
    expect(fiveHundred.total - fifty.total).toBe(largePages - smallPages);
    expect(fiveHundred.total).toBeLessThanOrEqual(fifty.total + 4);
  });

  it('pages through 500 threads 100 at a time with the same calls on every page', async () => {
    const whole = await listThreads(large.markup.id, { limit: 500 });
    const seen: number[] = [];
    const totals: number[] = [];
    let cursorId: string | undefined;
    do {
      const page = await listThreads(large.markup.id, { limit: 100, cursorId });
      expect(page.result.status).toBe(200);
      seen.push(...page.result.body.data.threads.map((thread: any) => thread.number));
      totals.push(page.total);
      expect(page.counts).toEqual(whole.counts);
      cursorId = page.result.body.data.cursorId ?? undefined;
    } while (cursorId);

    expect(totals).toHaveLength(5);
    expect(new Set(totals)).toEqual(new Set([whole.total]));
    expect(seen).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
  });

  it('reads a thread of 20 messages with the calls of a thread of 2', async () => {
    const detail = await seedMarkup(3, (number) => (number === 3 ? 20 : 2));
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
