import { beforeAll, describe, expect, it } from 'vitest';
import type { MarkupRecord } from '../../shared/db/items.js';
import { call, makeOrganization, type Org } from '../support/api.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { expectProblem } from '../support/problems.js';
import { listThreads, numbersOf } from '../support/thread-reads.js';
import { DESKTOP, MOBILE, TABLET, createThread, delta, makeTypedMarkup, reply } from '../support/threads.js';

const ORDERS = ['page', 'pin_asc', 'pin_desc', 'activity', 'timestamp', 'priority_asc', 'priority_desc'] as const;

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
    expect(response.body.data.threads[1].messages.map((message: { content: string }) => message.content)).toEqual([
      'Button colour is off',
      'And the HEADER overlaps it',
    ]);
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
    expect(numbersOf((await listThreads(org.workspaceKey, { markupId: markup.id, viewMode: DESKTOP, resolved: false })).threads)).toEqual([
      4,
    ]);
  });

  it('finds text in any message of a thread, replies included, ignoring case', async () => {
    const found = await listThreads(org.workspaceKey, { markupId: markup.id, q: 'header' });

    expect(found.total).toBe(2);
    expect(numbersOf(found.threads)).toEqual([1, 2]);
    expect(numbersOf((await listThreads(org.workspaceKey, { markupId: markup.id, q: 'HEAD' })).threads)).toEqual([1, 2, 4]);
    expect((await listThreads(org.workspaceKey, { markupId: markup.id, q: 'nowhere to be found' })).total).toBe(0);
  });

  it('answers 400 for a view mode that is neither a category nor a view mode id', async () => {
    expectProblem(
      await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, viewMode: 'watch' } }),
      400,
      '/query/viewMode',
    );
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
    for (const [i, pin] of pins.entries())
      threads.push(await createThread(org.workspaceKey, markup, { ...pin, message: delta(`Thread ${i + 1}`) }));
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
    for (const offset of [0, 2, 4, 6])
      pages.push(await listThreads(org.workspaceKey, { markupId: markup.id, order: 'activity', limit: 2, offset }));

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
    const byFirstMessage = await listThreads(org.workspaceKey, {
      markupId: markup.id,
      limit: 2,
      order: 'pin_desc',
      withThreadOrMessageId: threads[0]!.messages[0]!.id,
    });

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

    expectProblem(
      await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, withThreadOrMessageId: missingId } }),
      404,
    );
    expectProblem(
      await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, withThreadOrMessageId: elsewhere.id } }),
      404,
    );
  });

  it('answers 400 for cursorId together with offset', async () => {
    const { cursorId } = await listThreads(org.workspaceKey, { markupId: markup.id, limit: 2 });

    expectProblem(
      await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, limit: 2, cursorId: cursorId!, offset: 2 } }),
      400,
    );
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
