import { beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../shared/db/events.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { markupPartition } from '../../shared/db/markup-records.js';
import { queryPrefix } from '../../shared/db/paging.js';
import { getUsers } from '../../shared/db/users.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { makeMemberKey } from '../support/items.js';
import { BROWSER_CONTEXT, DESKTOP, MOBILE, TABLET, createThread, delta, makeTypedMarkup, reply, threadBody } from '../support/threads.js';
import { UUID, missingId } from '../support/ids.js';
import { expectProblem } from '../support/problems.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

type Org = Awaited<ReturnType<typeof makeOrganization>>;

const ADMIN_THREAD_SCOPES = ['view-thread', 'create-message', 'resolve-thread', 'update-thread', 'upload-screenshot', 'delete-thread'];
const ORDERS = ['page', 'pin_asc', 'pin_desc', 'activity', 'timestamp', 'priority_asc', 'priority_desc'] as const;

/** The stable user record an API key acts as (named after the key). */
async function apiUserOf(userId: string) {
  const [user] = await getUsers([userId]);
  if (!user) throw new Error(`no user ${userId}`);
  return user;
}

async function markupOf(key: string, markupId: string) {
  const response = await call('GET', `/markups/${markupId}`, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as { activeThreads: number; readOnly: boolean };
}

async function viewModeCounts(key: string, markupId: string): Promise<Record<string, number>> {
  const response = await call('GET', `/markups/${markupId}/view-modes`, { key });
  expect(response.status).toBe(200);
  return Object.fromEntries(response.body.data.map((mode: { id: string; threadCount: number }) => [mode.id, mode.threadCount]));
}

async function listThreads(key: string, query: Record<string, string | number | boolean | undefined>) {
  const response = await call('GET', '/threads', { key, query });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as { threads: { id: string; number: number; [field: string]: unknown }[]; query: { resolved: boolean | null }; offset: number; total: number; cursorId: string | null };
}

const numbersOf = (threads: readonly { number: number }[]) => threads.map((thread) => thread.number);

/** Every field of `body` but `field`. */
function without(body: Record<string, unknown>, field: string): Record<string, unknown> {
  const { [field]: _dropped, ...rest } = body;
  return rest;
}

describe('POST /threads (Resources: Thread; Endpoints: create thread body)', () => {
  let org: Org;
  let author: { id: string; createdAt: number; modifiedAt: number; name: string; guest: boolean };

  beforeAll(async () => {
    org = await makeOrganization();
    const user = await apiUserOf(org.workspaceKeyUserId);
    author = { id: user.id, createdAt: user.createdAt, modifiedAt: user.modifiedAt, name: user.name, guest: false };
  });

  /** The common public fields of a thread the workspace key just created with one message. */
  function expectCommonShape(thread: any, before: number, after: number, text = 'Please look at this') {
    expect(thread.id).toMatch(UUID);
    expect(thread.createdAt).toBeGreaterThanOrEqual(before);
    expect(thread.createdAt).toBeLessThanOrEqual(after);
    expect(thread).toMatchObject({
      modifiedAt: thread.createdAt,
      lastActivityAt: thread.createdAt,
      scopes: ADMIN_THREAD_SCOPES,
      assignedRoleSlugs: [],
      user: author,
      number: 1,
      resolved: false,
      userMetaData: { lastSeenAt: thread.createdAt },
      read: true,
      unreadMessageCount: 0,
    });
    expect(thread.messages).toEqual([
      {
        id: expect.stringMatching(UUID),
        createdAt: thread.createdAt,
        modifiedAt: thread.createdAt,
        scopes: ['view-message', 'update-message', 'delete-message'],
        assignedRoleSlugs: [],
        threadId: thread.id,
        message: text,
        messageJson: delta(text),
        user: author,
        userMetaData: { lastSeenAt: thread.createdAt },
        attachments: [],
        clipVideos: [],
        content: text,
        mentionIds: [],
        read: true,
      },
    ]);
  }

  /** GET /threads/:id answers exactly what the creation answered. */
  async function expectReadBack(thread: Record<string, unknown> & { id: string }) {
    const read = await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey });
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(thread);
  }

  it('creates a webpage thread with the webpage fields, its elements and parents, and reads it back the same', async () => {
    const markup = await makeTypedMarkup(org, 'webpage', { url: 'https://example.com/pricing' });
    const before = Date.now();

    const response = await call('POST', '/threads', {
      key: org.workspaceKey,
      body: threadBody(markup, {
        url: 'https://example.com/pricing?plan=pro',
        canonicalUrl: 'https://example.com/pricing',
        elements: [
          { elementPath: 'html > body > main > h1', offsetXPercentage: 12.5, offsetYPercentage: 50 },
          { elementPath: 'html > body > main', offsetXPercentage: 0, offsetYPercentage: 100 },
        ],
        elementParents: [{ url: 'https://example.com/pricing?plan=pro', canonicalUrl: 'https://example.com/pricing', path: 'html > body', depth: 1 }],
        viewModeId: TABLET,
      }),
    });

    const after = Date.now();
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const thread = response.body.data;
    expectCommonShape(thread, before, after);
    expect(thread).toMatchObject({
      projectId: markup.id,
      proxyUrl: 'https://example.com/pricing?plan=pro',
      originalUrl: 'https://example.com/pricing?plan=pro',
      canonicalUrl: 'https://example.com/pricing',
      browserContext: BROWSER_CONTEXT,
      viewModeId: TABLET,
      annotations: null,
      priority: null,
    });
    expect(thread.elements).toEqual([
      { id: expect.stringMatching(UUID), createdAt: thread.createdAt, modifiedAt: thread.createdAt, threadId: thread.id, path: 'html > body > main > h1', offsetXPercentage: 12.5, offsetYPercentage: 50 },
      { id: expect.stringMatching(UUID), createdAt: thread.createdAt, modifiedAt: thread.createdAt, threadId: thread.id, path: 'html > body > main', offsetXPercentage: 0, offsetYPercentage: 100 },
    ]);
    expect(thread.parents).toEqual([
      {
        id: expect.stringMatching(UUID),
        createdAt: thread.createdAt,
        modifiedAt: thread.createdAt,
        path: 'html > body',
        depth: 1,
        proxyUrl: 'https://example.com/pricing?plan=pro',
        originalUrl: 'https://example.com/pricing?plan=pro',
        canonicalUrl: 'https://example.com/pricing',
      },
    ]);
    await expectReadBack(thread);
  });

  it('creates an image thread on the first image by default, and on the image named by projectImageId', async () => {
    const markup = await makeTypedMarkup(org, 'image');
    const [first, second] = markup.images!;
    const before = Date.now();

    const onFirst = await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup, { offsetXPercentage: 0, offsetYPercentage: 100 }) });
    const after = Date.now();
    const onSecond = await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup, { projectImageId: second!.id, startTime: 1.5, endTime: 4 }) });

    expect(onFirst.status, JSON.stringify(onFirst.body)).toBe(200);
    expectCommonShape(onFirst.body.data, before, after);
    expect(onFirst.body.data).toMatchObject({ projectId: markup.id, projectImageId: first!.id, offsetXPercentage: 0, offsetYPercentage: 100, startTime: 0, endTime: 0 });
    expect(onFirst.body.data).not.toHaveProperty('elements');
    expect(onSecond.status).toBe(200);
    expect(onSecond.body.data).toMatchObject({ number: 2, projectImageId: second!.id, offsetXPercentage: 25, offsetYPercentage: 40, startTime: 1.5, endTime: 4 });
    await expectReadBack(onFirst.body.data);
    await expectReadBack(onSecond.body.data);
  });

  it('creates a PDF thread on its page with the text highlight', async () => {
    const markup = await makeTypedMarkup(org, 'pdf');
    const textHighlight = { startKey: 'p2-l1', endKey: 'p2-l2', startOffset: 3, startIndex: 0, endOffset: 8, endIndex: 1, text: 'Terms apply' };
    const before = Date.now();

    const response = await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup, { pageNumber: 2, textHighlight }) });

    const after = Date.now();
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expectCommonShape(response.body.data, before, after);
    expect(response.body.data).toMatchObject({ projectId: markup.id, projectImageId: null, offsetXPercentage: 25, offsetYPercentage: 40, pageNumber: 2, textHighlight });
    await expectReadBack(response.body.data);
  });

  it('creates a video thread at its start and end time', async () => {
    const markup = await makeTypedMarkup(org, 'video');
    const before = Date.now();

    const response = await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup, { startTime: 5, endTime: 9.5 }) });

    const after = Date.now();
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expectCommonShape(response.body.data, before, after);
    expect(response.body.data).toMatchObject({ projectId: markup.id, offsetXPercentage: 25, offsetYPercentage: 40, startTime: 5, endTime: 9.5 });
    await expectReadBack(response.body.data);
  });

  it('keeps annotations and priority as sent', async () => {
    const markup = await makeTypedMarkup(org, 'image');
    const annotations = { version: '2.1', scale: 1.5, originalWidth: 800, originalHeight: 600 };

    const thread = await createThread(org.workspaceKey, markup, { annotations, priority: 7 });

    expect(thread).toMatchObject({ annotations, priority: 7 });
    await expectReadBack(thread);
  });
});

describe('POST /threads refusals (Errors; problem+json)', () => {
  let org: Org;
  let webpage: MarkupRecord;

  beforeAll(async () => {
    org = await makeOrganization();
    webpage = await makeTypedMarkup(org, 'webpage');
  });

  async function post(body: Record<string, unknown>, key: string | null = org.workspaceKey) {
    return call('POST', '/threads', { key, body });
  }

  it.each(['isImageThread', 'url', 'canonicalUrl', 'elements', 'offsetXPercentage', 'offsetYPercentage', 'message', 'browserContext', 'elementParents', 'viewModeId'])(
    'answers 400 naming /body/%s when that required field is missing',
    async (field) => {
      expectProblem(await post(without(threadBody(webpage), field)), 400, `/body/${field}`);
    },
  );

  it.each([
    ['offsetXPercentage', { offsetXPercentage: -0.5 }, '/body/offsetXPercentage'],
    ['offsetYPercentage', { offsetYPercentage: 100.5 }, '/body/offsetYPercentage'],
    ['an element offset', { elements: [{ elementPath: 'html', offsetXPercentage: 10, offsetYPercentage: 150 }] }, '/body/elements/0/offsetYPercentage'],
  ])('answers 400 for %s outside 0..100', async (_name, overrides, pointer) => {
    expectProblem(await post(threadBody(webpage, overrides)), 400, pointer);
  });

  it('answers 400 when isImageThread does not match the markup type', async () => {
    const image = await makeTypedMarkup(org, 'image');

    expectProblem(await post(threadBody(webpage, { isImageThread: true })), 400, '/body/isImageThread');
    expectProblem(await post(threadBody(image, { isImageThread: false })), 400, '/body/isImageThread');
  });

  it('answers 400 for a viewModeId that is not one of the webpage view modes', async () => {
    expectProblem(await post(threadBody(webpage, { viewModeId: missingId })), 400, '/body/viewModeId');
  });

  it('answers 400 for a projectImageId that is not an image of the markup', async () => {
    const image = await makeTypedMarkup(org, 'image');
    const other = await makeTypedMarkup(org, 'image');

    expectProblem(await post(threadBody(image, { projectImageId: other.images![0]!.id })), 400, '/body/projectImageId');
  });

  it('answers 400 for a PDF thread without pageNumber or beyond the last page', async () => {
    const pdf = await makeTypedMarkup(org, 'pdf');

    expectProblem(await post(without(threadBody(pdf), 'pageNumber')), 400, '/body/pageNumber');
    expectProblem(await post(threadBody(pdf, { pageNumber: 4 })), 400, '/body/pageNumber');
    expectProblem(await post(threadBody(pdf, { pageNumber: 0 })), 400, '/body/pageNumber');
    expect((await post(threadBody(pdf, { pageNumber: 3 }))).status).toBe(200);
  });

  it('answers 400 for a video time beyond its duration or an endTime before the startTime', async () => {
    const video = await makeTypedMarkup(org, 'video');

    expectProblem(await post(threadBody(video, { startTime: 31 })), 400, '/body/startTime');
    expectProblem(await post(threadBody(video, { startTime: 10, endTime: 31 })), 400, '/body/endTime');
    expectProblem(await post(threadBody(video, { startTime: 10, endTime: 5 })), 400, '/body/endTime');
    expectProblem(await post(threadBody(video, { endTime: 5 })), 400, '/body/endTime');
    expect((await post(threadBody(video, { startTime: 30, endTime: 30 }))).status).toBe(200);
  });

  it('answers 400 for a message that says nothing', async () => {
    expectProblem(await post(threadBody(webpage, { message: delta('') })), 400, '/body/message');
    expectProblem(await post(threadBody(webpage, { message: { ops: [] } })), 400, '/body/message');
  });

  it('answers 400 naming /body/projectId when the markup is not named', async () => {
    expectProblem(await post(without(threadBody(webpage), 'projectId')), 400, '/body/projectId');
  });

  it('answers 404 for an unknown markup', async () => {
    expectProblem(await post(threadBody(webpage, { projectId: missingId })), 404);
  });

  it("answers 403 for a markup of another organization and for another workspace's markup", async () => {
    const stranger = await makeOrganization();
    const foreign = await makeTypedMarkup(stranger, 'webpage');
    const workspace = await makeSecondWorkspace(org.orgKey, 'Second');
    const besideIt = await makeTypedMarkup({ organizationId: org.organizationId, workspaceId: workspace.id }, 'webpage');

    expectProblem(await post(threadBody(foreign)), 403);
    expectProblem(await post(threadBody(foreign), org.orgKey), 403);
    expectProblem(await post(threadBody(besideIt)), 403);
    expect((await post(threadBody(besideIt), org.orgKey)).status).toBe(200);
  });

  it('answers 403 to a viewer and 401 without a key, and creates nothing', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    expectProblem(await post(threadBody(markup), viewer), 403);
    expectProblem(await post(threadBody(markup), null), 401);

    expect((await listThreads(org.workspaceKey, { markupId: markup.id })).total).toBe(0);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(0);
  });

  it('refuses threads with 403 markup-read-only while comments are paused, and takes them again once resumed', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    expect((await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } })).status).toBe(200);

    const paused = await post(threadBody(markup));
    expect((await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: false } })).status).toBe(200);
    const resumed = await post(threadBody(markup));

    expectProblem(paused, 403);
    expect(paused.body.type).toMatch(/markup-read-only$/);
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.number).toBe(1);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(1);
  });

  it('answers 409 while the markup is still being converted (isReady false)', async () => {
    const video = await makeTypedMarkup(org, 'video', { isReady: false, video: undefined });
    const image = await makeTypedMarkup(org, 'image', { isReady: false, images: [] });

    expectProblem(await post(threadBody(video)), 409);
    expectProblem(await post(threadBody(image)), 409);
  });
});

describe('thread numbers (1, 2, 3 per markup)', () => {
  it('numbers each markup on its own', async () => {
    const org = await makeOrganization();
    const [a, b] = await Promise.all([makeTypedMarkup(org, 'webpage'), makeTypedMarkup(org, 'pdf')]);

    const numbers: number[] = [];
    for (const markup of [a, a, b, a, b]) numbers.push((await createThread(org.workspaceKey, markup!)).number);

    expect(numbers).toEqual([1, 2, 1, 3, 2]);
  });

  it('gives 30 concurrent creations the numbers 1 to 30, each once, and counts all of them', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const modes = [DESKTOP, TABLET, MOBILE];

    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup, { viewModeId: modes[i % 3], message: delta(`Note ${i}`) }) })),
    );

    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    const numbers = responses.map((response) => response.body.data.number as number).sort((x, y) => x - y);
    expect(numbers).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(30);
    expect(await viewModeCounts(org.workspaceKey, markup.id)).toEqual({ [DESKTOP]: 10, [TABLET]: 10, [MOBILE]: 10 });
    const listed = await listThreads(org.workspaceKey, { markupId: markup.id, limit: 100 });
    expect(listed.total).toBe(30);
    expect(numbersOf(listed.threads)).toEqual(numbers);
  });
});

describe('GET /threads filters (resolved, viewMode, q)', () => {
  let org: Org;
  let markup: MarkupRecord;

  beforeAll(async () => {
    org = await makeOrganization();
    markup = await makeTypedMarkup(org, 'webpage');
    const first = await createThread(org.workspaceKey, markup, { viewModeId: DESKTOP, message: delta('Header is misaligned') });
    const second = await createThread(org.workspaceKey, markup, { viewModeId: TABLET, message: delta('Button colour is off') });
    await createThread(org.workspaceKey, markup, { viewModeId: MOBILE, message: delta('Footer link is broken') });
    await createThread(org.workspaceKey, markup, { viewModeId: DESKTOP, message: delta('Typo in the sub-heading') });
    await reply(org.workspaceKey, second.id, { content: 'And the HEADER overlaps it' });
    expect((await call('POST', `/threads/${first.id}/resolve`, { key: org.workspaceKey })).status).toBe(200);
  });

  it('answers { threads, query: { resolved }, offset, total, cursorId } with every thread by default', async () => {
    const response = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data).sort()).toEqual(['cursorId', 'offset', 'query', 'threads', 'total']);
    expect(response.body.data).toMatchObject({ query: { resolved: null }, offset: 0, total: 4, cursorId: null });
    expect(numbersOf(response.body.data.threads)).toEqual([1, 2, 3, 4]);
    expect(response.body.data.threads[1].messages.map((message: { content: string }) => message.content)).toEqual(['Button colour is off', 'And the HEADER overlaps it']);
  });

  it('filters by resolved and echoes it in query', async () => {
    const resolved = await listThreads(org.workspaceKey, { markupId: markup.id, resolved: true });
    const open = await listThreads(org.workspaceKey, { markupId: markup.id, resolved: false });

    expect(resolved).toMatchObject({ query: { resolved: true }, total: 1 });
    expect(numbersOf(resolved.threads)).toEqual([1]);
    expect(open).toMatchObject({ query: { resolved: false }, total: 3 });
    expect(numbersOf(open.threads)).toEqual([2, 3, 4]);
  });

  it('filters by view mode category and by view mode id', async () => {
    expect(numbersOf((await listThreads(org.workspaceKey, { markupId: markup.id, viewMode: 'desktop' })).threads)).toEqual([1, 4]);
    expect(numbersOf((await listThreads(org.workspaceKey, { markupId: markup.id, viewMode: 'mobile' })).threads)).toEqual([3]);
    expect(numbersOf((await listThreads(org.workspaceKey, { markupId: markup.id, viewMode: TABLET })).threads)).toEqual([2]);
    expect(numbersOf((await listThreads(org.workspaceKey, { markupId: markup.id, viewMode: DESKTOP, resolved: false })).threads)).toEqual([4]);
  });

  it('finds text in any message of a thread, replies included, ignoring case', async () => {
    const found = await listThreads(org.workspaceKey, { markupId: markup.id, q: 'header' });

    expect(found.total).toBe(2);
    expect(numbersOf(found.threads)).toEqual([1, 2]);
    expect(numbersOf((await listThreads(org.workspaceKey, { markupId: markup.id, q: 'HEAD' })).threads)).toEqual([1, 2, 4]);
    expect((await listThreads(org.workspaceKey, { markupId: markup.id, q: 'nowhere to be found' })).total).toBe(0);
  });

  it('answers 400 for a view mode that is neither a category nor a view mode id', async () => {
    expectProblem(await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, viewMode: 'watch' } }), 400, '/query/viewMode');
  });
});

describe('GET /threads orders and pages (ThreadOrder; Pagination)', () => {
  let org: Org;
  let markup: MarkupRecord;
  let threads: { id: string; number: number; messages: { id: string }[] }[];
  let replyToThird: { id: string };

  /**
   * Five threads on a two-image markup, each order giving its own sequence:
   * #1 image 2, t=20, priority 3; #2 image 1, t=5, no priority; #3 image 2, t=1, priority 1;
   * #4 image 1, t=12, priority 2; #5 image 1, no time, no priority. Then a reply to #3, then to #1.
   */
  const EXPECTED: Record<(typeof ORDERS)[number], number[]> = {
    page: [2, 4, 5, 1, 3],
    pin_asc: [1, 2, 3, 4, 5],
    pin_desc: [5, 4, 3, 2, 1],
    activity: [1, 3, 5, 4, 2],
    timestamp: [3, 2, 4, 1, 5],
    priority_asc: [3, 4, 1, 2, 5],
    priority_desc: [1, 4, 3, 2, 5],
  };

  beforeAll(async () => {
    org = await makeOrganization();
    markup = await makeTypedMarkup(org, 'image');
    const [one, two] = markup.images!;
    const pins = [
      { projectImageId: two!.id, startTime: 20, priority: 3 },
      { projectImageId: one!.id, startTime: 5 },
      { projectImageId: two!.id, startTime: 1, priority: 1 },
      { projectImageId: one!.id, startTime: 12, priority: 2 },
      { projectImageId: one!.id },
    ];
    threads = [];
    for (const [i, pin] of pins.entries()) threads.push(await createThread(org.workspaceKey, markup, { ...pin, message: delta(`Thread ${i + 1}`) }));
    replyToThird = await reply(org.workspaceKey, threads[2]!.id, { content: 'Seen' });
    await reply(org.workspaceKey, threads[0]!.id, { content: 'Seen too' });
  });

  it.each(ORDERS)('orders by %s', async (order) => {
    const listed = await listThreads(org.workspaceKey, { markupId: markup.id, order });

    expect(numbersOf(listed.threads)).toEqual(EXPECTED[order]);
  });

  it('orders by pin_asc when no order is given', async () => {
    expect(numbersOf((await listThreads(org.workspaceKey, { markupId: markup.id })).threads)).toEqual(EXPECTED.pin_asc);
  });

  it.each(ORDERS)('visits every thread once in %s order following cursorId, with total constant', async (order) => {
    const seen: number[] = [];
    let cursorId: string | undefined;
    let pages = 0;
    do {
      const page = await listThreads(org.workspaceKey, { markupId: markup.id, order, limit: 2, cursorId });
      expect(page.total).toBe(5);
      expect(page.threads.length).toBeLessThanOrEqual(2);
      seen.push(...numbersOf(page.threads));
      cursorId = page.cursorId ?? undefined;
      pages += 1;
    } while (cursorId && pages < 10);

    expect(seen).toEqual(EXPECTED[order]);
    expect(pages).toBe(3);
  });

  it('visits every thread once following offset, with total constant and offset echoed', async () => {
    const pages = [];
    for (const offset of [0, 2, 4, 6]) pages.push(await listThreads(org.workspaceKey, { markupId: markup.id, order: 'activity', limit: 2, offset }));

    expect(pages.map((page) => page.offset)).toEqual([0, 2, 4, 6]);
    expect(pages.map((page) => page.total)).toEqual([5, 5, 5, 5]);
    expect(pages.flatMap((page) => numbersOf(page.threads))).toEqual(EXPECTED.activity);
    expect(pages[3]!.threads).toEqual([]);
  });

  it('keeps going after the last thread of a page when a thread is added between pages', async () => {
    const own = await makeTypedMarkup(org, 'webpage');
    for (let i = 0; i < 3; i += 1) await createThread(org.workspaceKey, own);

    const first = await listThreads(org.workspaceKey, { markupId: own.id, limit: 2 });
    await createThread(org.workspaceKey, own);
    const second = await listThreads(org.workspaceKey, { markupId: own.id, limit: 2, cursorId: first.cursorId! });

    expect(numbersOf(first.threads)).toEqual([1, 2]);
    expect(numbersOf(second.threads)).toEqual([3, 4]);
    expect(second.total).toBe(4);
  });

  it('opens the page holding a thread or the thread of a message named by withThreadOrMessageId', async () => {
    const byThread = await listThreads(org.workspaceKey, { markupId: markup.id, limit: 2, withThreadOrMessageId: threads[4]!.id });
    const byMessage = await listThreads(org.workspaceKey, { markupId: markup.id, limit: 2, withThreadOrMessageId: replyToThird.id });
    const byFirstMessage = await listThreads(org.workspaceKey, { markupId: markup.id, limit: 2, order: 'pin_desc', withThreadOrMessageId: threads[0]!.messages[0]!.id });

    expect(byThread).toMatchObject({ offset: 4, total: 5, cursorId: null });
    expect(numbersOf(byThread.threads)).toEqual([5]);
    expect(byMessage.offset).toBe(2);
    expect(numbersOf(byMessage.threads)).toEqual([3, 4]);
    expect(byFirstMessage.offset).toBe(4);
    expect(numbersOf(byFirstMessage.threads)).toEqual([1]);
  });

  it('answers 404 for a withThreadOrMessageId that is no thread or message of the markup', async () => {
    const other = await makeTypedMarkup(org, 'webpage');
    const elsewhere = await createThread(org.workspaceKey, other);

    expectProblem(await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, withThreadOrMessageId: missingId } }), 404);
    expectProblem(await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, withThreadOrMessageId: elsewhere.id } }), 404);
  });

  it('answers 400 for cursorId together with offset', async () => {
    const { cursorId } = await listThreads(org.workspaceKey, { markupId: markup.id, limit: 2 });

    expectProblem(await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, limit: 2, cursorId: cursorId!, offset: 2 } }), 400);
  });

  it('answers 400 for a cursor of another order, filter or markup, and for a tampered cursor', async () => {
    const other = await makeTypedMarkup(org, 'image');
    for (let i = 0; i < 3; i += 1) await createThread(org.workspaceKey, other);
    const cursorId = (await listThreads(org.workspaceKey, { markupId: markup.id, limit: 2, order: 'pin_asc' })).cursorId!;
    const tampered = `${cursorId.slice(0, -2)}${cursorId.endsWith('AA') ? 'BB' : 'AA'}`;
    const [payload, signature] = cursorId.split('.');
    const forged = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), p: { p: [0] } })).toString('base64url')}.${signature}`;

    const refused = [
      { markupId: markup.id, limit: 2, order: 'pin_desc', cursorId },
      { markupId: markup.id, limit: 2, order: 'pin_asc', resolved: false, cursorId },
      { markupId: markup.id, limit: 2, order: 'pin_asc', q: 'thread', cursorId },
      { markupId: other.id, limit: 2, order: 'pin_asc', cursorId },
      { markupId: markup.id, limit: 2, order: 'pin_asc', cursorId: tampered },
      { markupId: markup.id, limit: 2, order: 'pin_asc', cursorId: forged },
      { markupId: markup.id, limit: 2, order: 'pin_asc', cursorId: 'not-a-cursor' },
    ];
    for (const query of refused) expectProblem(await call('GET', '/threads', { key: org.workspaceKey, query }), 400);
  });

  it.each([
    ['an unknown order', { order: 'newest' }, '/query/order'],
    ['a resolved that is not a boolean', { resolved: 'yes' }, '/query/resolved'],
    ['a limit of 0', { limit: 0 }, '/query/limit'],
    ['a limit that is not a number', { limit: 'ten' }, '/query/limit'],
    ['a limit above 500', { limit: 501 }, '/query/limit'],
    ['a negative offset', { offset: -1 }, '/query/offset'],
  ])('answers 400 for %s', async (_name, query, pointer) => {
    expectProblem(await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, ...query } }), 400, pointer);
  });

  it('answers 400 without markupId, 404 for an unknown markup, 401 without a key, and serves a viewer', async () => {
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    expectProblem(await call('GET', '/threads', { key: org.workspaceKey }), 400, '/query/markupId');
    expectProblem(await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: missingId } }), 404);
    expectProblem(await call('GET', '/threads', { key: null, query: { markupId: markup.id } }), 401);
    expect((await listThreads(viewer, { markupId: markup.id })).total).toBe(5);
  });
});

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
    expect(resolvedEvents.map((event) => event.threadId).sort()).toEqual(threads.slice(0, 3).map((thread) => thread.id).sort());
  });

  it('records comment_updated with the markup when a pin moves', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const thread = await createThread(org.workspaceKey, markup);

    await call('PATCH', `/threads/${thread.id}/move-pin`, { key: org.workspaceKey, body: { viewportXPercentage: 50, viewportYPercentage: 50 } });

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

describe('one thread by id outside the key\'s reach (Authentication)', () => {
  it("answers 403 to a key of another organization or of another workspace, on every operation of a thread", async () => {
    const org = await makeOrganization();
    const stranger = await makeOrganization();
    const workspace = await makeSecondWorkspace(org.orgKey, 'Second');
    const markup = await makeTypedMarkup({ organizationId: org.organizationId, workspaceId: workspace.id }, 'image');
    const thread = await createThread(org.orgKey, markup);
    const pin = { viewportXPercentage: 1, viewportYPercentage: 1 };

    for (const key of [stranger.workspaceKey, stranger.orgKey, org.workspaceKey]) {
      expectProblem(await call('GET', `/threads/${thread.id}`, { key }), 403);
      expectProblem(await call('POST', `/threads/${thread.id}/resolve`, { key }), 403);
      expectProblem(await call('POST', `/threads/${thread.id}/unresolve`, { key }), 403);
      expectProblem(await call('PATCH', `/threads/${thread.id}/move-pin`, { key, body: pin }), 403);
      expectProblem(await call('DELETE', `/threads/${thread.id}`, { key }), 403);
      expectProblem(await call('GET', '/threads', { key, query: { markupId: markup.id } }), 403);
    }

    const unchanged = await call('GET', `/threads/${thread.id}`, { key: org.orgKey });
    expect(unchanged.body.data).toMatchObject({ resolved: false, offsetXPercentage: 25, offsetYPercentage: 40 });
  });

  it('shows a viewer the thread with view-thread as its only scope, and refuses it the delete', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    const seen = await call('GET', `/threads/${thread.id}`, { key: viewer });
    const deleted = await call('DELETE', `/threads/${thread.id}`, { key: viewer });

    expect(seen.status).toBe(200);
    expect(seen.body.data.scopes).toEqual(['view-thread']);
    expect(seen.body.data.messages[0].scopes).toEqual(['view-message']);
    expectProblem(deleted, 403);
    expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).status).toBe(200);
  });
});

describe('PATCH /threads/:id/move-pin (Thread record returned by move-pin)', () => {
  let org: Org;

  beforeAll(async () => {
    org = await makeOrganization();
  });

  it('moves a webpage pin to new elements and answers the webpage thread record', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const parents = [{ url: 'https://example.com/pricing?plan=pro', canonicalUrl: 'https://example.com/pricing', path: 'html > body > main', depth: 2 }];

    const moved = await call('PATCH', `/threads/${thread.id}/move-pin`, {
      key: org.workspaceKey,
      body: {
        url: 'https://example.com/pricing?plan=pro',
        canonicalUrl: 'https://example.com/pricing',
        elements: [{ elementPath: 'html > body > main > button', offsetXPercentage: 80, offsetYPercentage: 20 }],
        elementParents: parents,
        browserContext: { ...BROWSER_CONTEXT, viewportWidth: 1280 },
      },
    });

    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data).toEqual({
      id: thread.id,
      userId: org.workspaceKeyUserId,
      projectId: markup.id,
      number: 1,
      resolved: false,
      proxyHostId: expect.any(String),
      urlPath: '/pricing?plan=pro',
      canonicalUrl: 'https://example.com/pricing',
      viewModeId: DESKTOP,
    });
    const read = (await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data;
    expect(read).toMatchObject({ proxyUrl: 'https://example.com/pricing?plan=pro', canonicalUrl: 'https://example.com/pricing', browserContext: { viewportWidth: 1280 } });
    expect(read.elements).toEqual([
      { id: expect.stringMatching(UUID), createdAt: expect.any(Number), modifiedAt: expect.any(Number), threadId: thread.id, path: 'html > body > main > button', offsetXPercentage: 80, offsetYPercentage: 20 },
    ]);
    expect(read.parents).toMatchObject([{ path: 'html > body > main', depth: 2, proxyUrl: parents[0]!.url }]);
    expect(read.modifiedAt).toBeGreaterThan(thread.modifiedAt);
  });

  it('moves an image pin to new offsets and answers the image thread record', async () => {
    const markup = await makeTypedMarkup(org, 'image');
    const thread = await createThread(org.workspaceKey, markup, { projectImageId: markup.images![1]!.id, startTime: 2, endTime: 3 });

    const moved = await call('PATCH', `/threads/${thread.id}/move-pin`, { key: org.workspaceKey, body: { viewportXPercentage: 70, viewportYPercentage: 80.5 } });

    expect(moved.status).toBe(200);
    expect(moved.body.data).toEqual({
      id: thread.id,
      userId: org.workspaceKeyUserId,
      projectId: markup.id,
      number: 1,
      resolved: false,
      projectImageId: markup.images![1]!.id,
      offsetXPercentage: 70,
      offsetYPercentage: 80.5,
      startTime: 2,
      endTime: 3,
    });
    expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data).toMatchObject({ offsetXPercentage: 70, offsetYPercentage: 80.5 });
  });

  it('moves a PDF pin and answers the PDF thread record', async () => {
    const markup = await makeTypedMarkup(org, 'pdf');
    const thread = await createThread(org.workspaceKey, markup, { pageNumber: 3 });
    await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey });

    const moved = await call('PATCH', `/threads/${thread.id}/move-pin`, { key: org.workspaceKey, body: { viewportXPercentage: 5, viewportYPercentage: 95 } });

    expect(moved.status).toBe(200);
    expect(moved.body.data).toEqual({
      id: thread.id,
      userId: org.workspaceKeyUserId,
      projectId: markup.id,
      number: 1,
      resolved: true,
      pageNumber: 3,
      pageRelativeX: 5,
      pageRelativeY: 95,
    });
  });

  it('answers 400 for an image pin without both offsets or with one outside 0..100, and 403 to a viewer', async () => {
    const markup = await makeTypedMarkup(org, 'image');
    const thread = await createThread(org.workspaceKey, markup);
    const webpage = await makeTypedMarkup(org, 'webpage');
    const webThread = await createThread(org.workspaceKey, webpage);
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    expectProblem(await call('PATCH', `/threads/${thread.id}/move-pin`, { key: org.workspaceKey, body: { viewportXPercentage: 10 } }), 400);
    expectProblem(await call('PATCH', `/threads/${thread.id}/move-pin`, { key: org.workspaceKey, body: {} }), 400);
    expectProblem(await call('PATCH', `/threads/${thread.id}/move-pin`, { key: org.workspaceKey, body: { viewportXPercentage: 10, viewportYPercentage: 101 } }), 400, '/body/viewportYPercentage');
    expectProblem(await call('PATCH', `/threads/${webThread.id}/move-pin`, { key: org.workspaceKey, body: {} }), 400);
    expectProblem(await call('PATCH', `/threads/${thread.id}/move-pin`, { key: viewer, body: { viewportXPercentage: 10, viewportYPercentage: 10 } }), 403);
    expectProblem(await call('PATCH', `/threads/${missingId}/move-pin`, { key: org.workspaceKey, body: { viewportXPercentage: 10, viewportYPercentage: 10 } }), 404);

    expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data).toMatchObject({ offsetXPercentage: 25, offsetYPercentage: 40 });
  });
});

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
    expect(await marksOf(thread.id)).toHaveLength(5);

    expect((await call('DELETE', `/threads/${thread.id}`, { key: org.workspaceKey })).status).toBe(204);

    expect(await marksOf(thread.id)).toEqual([]);
    expect(await marksOf(kept.id)).toHaveLength(3);
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
