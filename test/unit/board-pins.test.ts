import { describe, expect, it } from 'vitest';
import {
  elementAt,
  formatTime,
  isUnread,
  orderThreads,
  pagePinOf,
  pageRefusalOf,
  percentOf,
  refusalOf,
  showsAt,
  unlocatedPaths,
  videoRange,
  visibleThreads,
} from '../../web/board/pins.js';
import { BoardStore } from '../../web/board/store.js';
import { boardTransport, type BoardTransport } from '../../web/board/transport.js';
import type { PageLayout, Thread } from '../../web/board/types.js';

/** The board's pure rules and its store (web/board), shared by the review app and the embeddable client (issue 30). */
const thread = (number: number, changes: Partial<Thread> = {}): Thread => ({
  id: `t${number}`,
  number,
  resolved: false,
  createdAt: number,
  user: { id: 'u', name: 'Ann' },
  scopes: [],
  messages: [
    { id: `m${number}`, createdAt: number, modifiedAt: number, content: `comment ${number}`, user: { id: 'u', name: 'Ann' }, scopes: [] },
  ],
  ...changes,
});

describe('the board rules', () => {
  it('filters open and resolved threads alike for pins and list', () => {
    const threads = [thread(1), thread(2, { resolved: true }), thread(3)];
    expect(visibleThreads({ threads, filter: 'all' }).map((t) => t.number)).toEqual([1, 2, 3]);
    expect(visibleThreads({ threads, filter: 'open' }).map((t) => t.number)).toEqual([1, 3]);
    expect(visibleThreads({ threads, filter: 'resolved' }).map((t) => t.number)).toEqual([2]);
  });

  it('orders the list by number, latest activity, or place (page, time, image)', () => {
    const threads = [
      thread(1, { lastActivityAt: 5, pageNumber: 3 }),
      thread(2, { lastActivityAt: 9, pageNumber: 1 }),
      thread(3, { lastActivityAt: 7, pageNumber: 1 }),
    ];
    expect(orderThreads(threads, 'number').map((t) => t.number)).toEqual([1, 2, 3]);
    expect(orderThreads(threads, 'activity').map((t) => t.number)).toEqual([2, 3, 1]);
    expect(orderThreads(threads, 'position').map((t) => t.number)).toEqual([2, 3, 1]);
    const images = [thread(1, { projectImageId: 'b' }), thread(2, { projectImageId: 'a' }), thread(3, { projectImageId: null })];
    expect(orderThreads(images, 'position', ['a', 'b']).map((t) => t.number)).toEqual([2, 3, 1]);
  });

  it('shows a video pin during its range, and a point range for half a second', () => {
    expect(showsAt({ startTime: 1, endTime: 2 }, 0.5)).toBe(false);
    expect(showsAt({ startTime: 1, endTime: 2 }, 1)).toBe(true);
    expect(showsAt({ startTime: 1, endTime: 2 }, 2)).toBe(true);
    expect(showsAt({ startTime: 1, endTime: 2 }, 2.2)).toBe(false);
    expect(showsAt({ startTime: 3, endTime: 3 }, 3.4)).toBe(true);
    expect(showsAt({ startTime: 3, endTime: 3 }, 3.7)).toBe(false);
    expect(showsAt({}, 0)).toBe(true);
  });

  it('gives a video comment three seconds from the current time, never past the end', () => {
    expect(videoRange(1.234, 10)).toEqual({ startTime: 1.23, endTime: 4.23 });
    expect(videoRange(9, 10)).toEqual({ startTime: 9, endTime: 10 });
    expect(videoRange(12, 10)).toEqual({ startTime: 10, endTime: 10 });
  });

  it('turns a click into percentages of the box, clamped, two decimals', () => {
    const box = { left: 100, top: 50, width: 400, height: 300 };
    expect(percentOf({ x: 200, y: 200 }, box)).toEqual([25, 50]);
    expect(percentOf({ x: 50, y: 400 }, box)).toEqual([0, 100]);
    expect(percentOf({ x: 233, y: 51 }, box)).toEqual([33.25, 0.33]);
    expect(percentOf({ x: 1, y: 1 }, { left: 0, top: 0, width: 0, height: 0 })).toEqual([50, 50]);
  });

  it('formats media times, tells unread threads and says why comments are refused', () => {
    expect(formatTime(0)).toBe('0:00.0');
    expect(formatTime(75.25)).toBe('1:15.3');
    expect(isUnread({ read: false })).toBe(true);
    expect(isUnread({ read: true, unreadMessageCount: 2 })).toBe(true);
    expect(isUnread({ read: true, unreadMessageCount: 0 })).toBe(false);
    expect(refusalOf({ type: 'image', readOnly: true, scopes: ['create-thread'] })).toMatch(/paused/);
    expect(refusalOf({ type: 'image', readOnly: false, scopes: ['view-project'] })).toMatch(/role/);
    expect(refusalOf({ type: 'image', readOnly: false, scopes: ['view-project', 'create-thread'] })).toBeUndefined();
  });
});

describe('webpage pins on a page screenshot', () => {
  // A 1000 x 2000 page: body, a card at (100, 200) 400 x 100, a button inside it, and a selector located at render.
  const layout: PageLayout = {
    width: 1000,
    height: 2000,
    elements: [
      { path: 'html > body', x: 0, y: 0, width: 1000, height: 2000 },
      { path: 'html > body > div', x: 100, y: 200, width: 400, height: 100 },
      { path: 'html > body > div > button', x: 300, y: 250, width: 100, height: 40 },
    ],
    located: { '#card': { x: 100, y: 200, width: 400, height: 100 }, '#gone': null },
  };
  const on = (path: string, x = 50, y = 50) => ({ elements: [{ path, offsetXPercentage: x, offsetYPercentage: y }] });

  it("places a pin at its element's box plus its offsets, by canonical path or by a located selector, and nowhere when the element is missing", () => {
    expect(pagePinOf(on('html > body > div', 25, 50), layout)).toEqual({ x: 20, y: 12.5 });
    expect(pagePinOf(on('#card', 100, 100), layout)).toEqual({ x: 50, y: 15 });
    expect(pagePinOf(on('#gone'), layout)).toBeUndefined();
    expect(pagePinOf(on('main > p'), layout)).toBeUndefined();
    expect(pagePinOf({ elements: [] }, layout)).toBeUndefined();
  });

  it('finds the deepest element under a point, with the point as percentages of its box', () => {
    expect(elementAt(layout, { x: 350, y: 260 })).toEqual({
      path: 'html > body > div > button',
      offsetXPercentage: 50,
      offsetYPercentage: 25,
    });
    expect(elementAt(layout, { x: 200, y: 225 })).toEqual({ path: 'html > body > div', offsetXPercentage: 25, offsetYPercentage: 25 });
    expect(elementAt(layout, { x: 900, y: 1900 })).toMatchObject({ path: 'html > body' });
    expect(elementAt({ ...layout, elements: [] }, { x: 1, y: 1 })).toBeUndefined();
  });

  it('tells which selectors the layout has not looked for yet, and why no comment can be placed', () => {
    expect(unlocatedPaths([on('#late'), on('#gone'), on('html > body > div'), on('#late')], layout)).toEqual(['#late']);
    expect(pageRefusalOf({ type: 'webpage', pageScreenshots: [{ viewModeId: 'd', state: 'pending' }] })).toMatch(
      /once the page is rendered/,
    );
    expect(
      pageRefusalOf({
        type: 'webpage',
        pageScreenshots: [{ viewModeId: 'd', state: 'unavailable', error: 'The page answered HTTP 404.' }],
      }),
    ).toMatch(/HTTP 404/);
    expect(
      pageRefusalOf({
        type: 'webpage',
        pageScreenshots: [
          { viewModeId: 'd', state: 'ready' },
          { viewModeId: 'm', state: 'pending' },
        ],
      }),
    ).toBeUndefined();
    expect(pageRefusalOf({ type: 'image' })).toBeUndefined();
  });

  it('posts a webpage pin as a webpage thread: the element path, its offsets, the page and the view mode', async () => {
    const bodies: unknown[] = [];
    const transport = boardTransport(async <T>(_path: string, options?: { body?: unknown }) => {
      bodies.push(options?.body);
      return {} as T;
    });
    await transport.createImageThread(
      'm1',
      {
        offsetXPercentage: 30,
        offsetYPercentage: 40,
        element: { path: 'html > body > div', url: 'https://example.com/', viewModeId: 'v1', viewport: { width: 1440, height: 900 } },
      },
      'Hi',
    );
    expect(bodies[0]).toEqual({
      isImageThread: false,
      projectId: 'm1',
      url: 'https://example.com/',
      canonicalUrl: 'https://example.com/',
      elements: [{ elementPath: 'html > body > div', offsetXPercentage: 30, offsetYPercentage: 40 }],
      elementParents: [],
      offsetXPercentage: 30,
      offsetYPercentage: 40,
      browserContext: { viewportWidth: 1440, viewportHeight: 900 },
      viewModeId: 'v1',
      content: 'Hi',
    });
  });
});

describe('the board store', () => {
  function fakeTransport(threads: Thread[]): BoardTransport & { calls: string[] } {
    const calls: string[] = [];
    return {
      calls,
      listThreads: async () => threads,
      getThread: async (id) => ({
        ...threads.find((t) => t.id === id)!,
        messages: [
          ...threads.find((t) => t.id === id)!.messages,
          { id: 'r', createdAt: 9, modifiedAt: 9, content: 'reply', user: { id: 'u', name: 'Ann' }, scopes: [] },
        ],
      }),
      createImageThread: async (_markupId, placement, content) => {
        calls.push(`create ${JSON.stringify(placement)} ${content}`);
        return thread(9, { ...placement });
      },
      reply: async (id, content, _mentionIds, attachmentIds = []) => {
        calls.push(`reply ${id} ${content}${attachmentIds.length ? ` with ${attachmentIds.join(',')}` : ''}`);
        return { id: 'r', createdAt: 9, modifiedAt: 9, content, user: { id: 'u', name: 'Ann' }, scopes: [] };
      },
      resolve: async (id) => void calls.push(`resolve ${id}`),
      reopen: async (id) => void calls.push(`reopen ${id}`),
      markRead: async (id) => void calls.push(`read ${id}`),
      editMessage: async () => undefined,
      deleteMessage: async () => undefined,
      viewModes: async () => [],
      pageLayout: async () => ({ width: 100, height: 100, elements: [], located: {} }),
      taggable: async () => [],
      deleteThread: async (id) => void calls.push(`delete ${id}`),
      uploadAttachment: async (markupId, file, onProgress) => {
        calls.push(`upload ${file.name} for ${markupId}`);
        onProgress(0.5);
        onProgress(1);
        return `file-${file.name}`;
      },
    };
  }

  it('places a draft, posts it as a thread in number order, and leaves "Add comment" mode', async () => {
    const transport = fakeTransport([thread(2), thread(1)]);
    const store = new BoardStore(transport, 'markup');
    let changes = 0;
    store.subscribe(() => changes++);
    await store.load();
    expect(store.get().threads.map((t) => t.number)).toEqual([1, 2]);
    store.setAdding(true);
    store.place({ offsetXPercentage: 10, offsetYPercentage: 20, projectImageId: 'i1' });
    expect(store.get()).toMatchObject({ adding: false, draft: { offsetXPercentage: 10 } });
    const posted = await store.post('Hello');
    expect(posted?.number).toBe(9);
    expect(store.get().draft).toBeUndefined();
    expect(store.get().threads.map((t) => t.number)).toEqual([1, 2, 9]);
    expect(transport.calls).toEqual(['create {"offsetXPercentage":10,"offsetYPercentage":20,"projectImageId":"i1"} Hello']);
    expect(changes).toBeGreaterThan(3);
  });

  it('marks an unread thread read when opened, resolves and reopens it, and keeps a failure as its detail', async () => {
    const transport = fakeTransport([thread(1, { read: false, unreadMessageCount: 1 })]);
    const store = new BoardStore(transport, 'markup');
    await store.load();
    store.open('t1');
    expect(store.get().threads[0]).toMatchObject({ read: true, unreadMessageCount: 0 });
    await store.setResolved('t1', true);
    expect(store.get().threads[0]!.resolved).toBe(true);
    await store.setResolved('t1', false);
    expect(store.get().threads[0]!.resolved).toBe(false);
    expect(await store.reply('t1', 'Sure')).toBe(true);
    expect(store.get().threads[0]!.messages.map((m) => m.content)).toEqual(['comment 1', 'reply']);
    expect(transport.calls).toEqual(['read t1', 'resolve t1', 'reopen t1', 'reply t1 Sure']);

    transport.reply = async () => {
      throw new Error('Comments are paused on this markup.');
    };
    expect(await store.reply('t1', 'Again')).toBe(false);
    expect(store.get().error).toBe('Comments are paused on this markup.');

    expect(await store.deleteThread('t1')).toBe(true);
    expect(store.get()).toMatchObject({ threads: [], openThreadId: undefined });
  });

  it('uploads an attachment for the markup with its progress, sends it with the reply, and keeps a refused upload as its detail', async () => {
    const transport = fakeTransport([thread(1)]);
    const store = new BoardStore(transport, 'markup');
    await store.load();
    const progress: number[] = [];
    const fileId = await store.uploadAttachment(new File(['png'], 'shot.png', { type: 'image/png' }), (fraction) =>
      progress.push(fraction),
    );
    expect(fileId).toBe('file-shot.png');
    expect(progress).toEqual([0.5, 1]);
    expect(await store.reply('t1', '', [], [fileId!])).toBe(true);
    expect(transport.calls).toEqual(['upload shot.png for markup', 'reply t1  with file-shot.png']);

    transport.uploadAttachment = async () => {
      throw new Error('The file is larger than the plan allows.');
    };
    expect(await store.uploadAttachment(new File(['x'], 'big.bin'), () => undefined)).toBeUndefined();
    expect(store.get().error).toBe('The file is larger than the plan allows.');
  });
});
