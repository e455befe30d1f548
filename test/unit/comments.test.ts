import { describe, expect, it } from 'vitest';
import type { MarkupRecord } from '../../shared/db/items.js';
import type { Delta, MessageRecord } from '../../shared/db/messages.js';
import type { ReadMark } from '../../shared/db/read-marks.js';
import type { ThreadRecord } from '../../shared/db/threads.js';
import { deltaOf, mentionIdsOf, normalizeText, plainTextOf, resolveMessageText, TextMismatch } from '../../shared/domain/comments/delta.js';
import { VIEW_MODES } from '../../shared/domain/markups/view-modes.js';
import {
  comparePositions,
  positionOf,
  THREAD_ORDERS,
  viewModeIdsOf,
  type ThreadOrder,
} from '../../shared/domain/comments/thread-selection.js';
import { indexReadMarks, readStateOf, readStateOfWriter } from '../../shared/domain/comments/read-state.js';

const DESKTOP = VIEW_MODES.find((mode) => mode.category === 'desktop')!.id;
const TABLET = VIEW_MODES.find((mode) => mode.category === 'tablet')!.id;
const MOBILE = VIEW_MODES.find((mode) => mode.category === 'mobile')!.id;

const IMAGE_ONE = 'aaaaaaaa-0000-4000-8000-000000000001';
const IMAGE_TWO = 'aaaaaaaa-0000-4000-8000-000000000002';

/** A markup as the list logic sees it: only its images matter (the `page` order). */
function makeMarkupRecord(overrides: Partial<MarkupRecord> = {}): MarkupRecord {
  return {
    kind: 'markup',
    id: 'markup-1',
    workspaceId: 'ws-1',
    organizationId: 'org-1',
    parentFolderId: 'root-1',
    name: 'Board',
    createdAt: 1,
    modifiedAt: 1,
    activityAt: 1,
    type: 'image',
    readOnly: false,
    status: 'editing',
    isReady: true,
    thumbnailState: 'unavailable',
    note: { id: 'note-1', note: '', showNoteOnProjectOpen: false },
    retainOriginal: false,
    hasRetainedOriginal: false,
    activeThreads: 0,
    createdBy: 'user-1',
    images: [
      { id: IMAGE_ONE, key: 'one.png', mimeType: 'image/png', filesize: 1 },
      { id: IMAGE_TWO, key: 'two.png', mimeType: 'image/png', filesize: 1 },
    ],
    ...overrides,
  } as MarkupRecord;
}

function makeThreadRecord(overrides: Partial<ThreadRecord> & Pick<ThreadRecord, 'id' | 'number'>): ThreadRecord {
  return {
    markupId: 'markup-1',
    workspaceId: 'ws-1',
    organizationId: 'org-1',
    kind: 'image',
    userId: 'user-1',
    createdAt: 100,
    modifiedAt: 100,
    lastActivityAt: 100,
    resolved: false,
    priority: null,
    revision: 1,
    ...overrides,
  };
}

/**
 * A message whose change made thread revision `threadRevision` (by default its modifiedAt, so times and revisions read alike in these
 * cases).
 */
function makeMessageRecord(overrides: Partial<MessageRecord> & Pick<MessageRecord, 'id'>): MessageRecord {
  return {
    threadRevision: overrides.modifiedAt ?? 100,
    threadId: 't1',
    markupId: 'markup-1',
    workspaceId: 'ws-1',
    organizationId: 'org-1',
    userId: 'user-1',
    createdAt: 100,
    modifiedAt: 100,
    modifiedBy: 'user-1',
    content: 'Hello',
    delta: deltaOf('Hello'),
    mentionIds: [],
    attachments: [],
    clipVideos: [],
    ...overrides,
  };
}

const mention = (id: string, extra: Record<string, unknown> = {}) => ({ insert: { mention: { id, ...extra } } });

// ---------------------------------------------------------------------------------------------
// delta.ts
// ---------------------------------------------------------------------------------------------

describe('Message: content is what the messageJson Delta reads as (delta.ts)', () => {
  it('reads string inserts joined, without the trailing newline every Delta ends with', () => {
    const delta: Delta = { ops: [{ insert: 'Hello ' }, { insert: 'bold', attributes: { bold: true } }, { insert: '\nsecond line\n' }] };

    expect(plainTextOf(delta)).toBe('Hello bold\nsecond line');
  });

  it('reads mentions as @name, falling back to the quill-mention value and then the id', () => {
    const delta: Delta = {
      ops: [
        { insert: 'Hi ' },
        mention('u1', { name: 'Ada' }),
        { insert: ', ' },
        mention('u2', { value: 'Grace' }),
        { insert: ' and ' },
        mention('u3'),
        { insert: '\n' },
      ],
    };

    expect(plainTextOf(delta)).toBe('Hi @Ada, @Grace and @u3');
  });

  it('reads other embeds (images, videos) and malformed mentions as nothing', () => {
    const delta: Delta = {
      ops: [
        { insert: 'a' },
        { insert: { image: 'https://e.com/x.png' } },
        { insert: { mention: 'not-an-object' } },
        { insert: { mention: { name: 'no id' } } },
        { insert: 'b\n' },
      ],
    };

    expect(plainTextOf(delta)).toBe('ab');
  });

  it('normalises CRLF and lone CR to LF and drops every trailing newline', () => {
    expect(normalizeText('one\r\ntwo\rthree\n\n\n')).toBe('one\ntwo\nthree');
    expect(plainTextOf({ ops: [{ insert: 'x\r\ny\r\n\r\n' }] })).toBe('x\ny');
    expect(normalizeText('\n\n')).toBe('');
    expect(normalizeText('  spaced  ')).toBe('  spaced  ');
  });

  it('makes a Delta of plain text as one insert ending in exactly one newline', () => {
    expect(deltaOf('text')).toEqual({ ops: [{ insert: 'text\n' }] });
    expect(deltaOf('a\r\nb\r\n\r\n')).toEqual({ ops: [{ insert: 'a\nb\n' }] });
    expect(deltaOf('')).toEqual({ ops: [{ insert: '\n' }] });
  });

  it('round-trips text through deltaOf and plainTextOf', () => {
    for (const text of ['plain', 'two\nlines', 'tabs\tand  spaces', '', 'émoji 🎉']) expect(plainTextOf(deltaOf(text))).toBe(text);
  });

  it('lists mentioned user ids once each, in order of appearance, ignoring embeds without a string id', () => {
    const delta: Delta = {
      ops: [
        mention('u2'),
        { insert: ' ' },
        mention('u1', { name: 'One' }),
        mention('u2', { name: 'Two again' }),
        { insert: { mention: { id: 7 } } },
        { insert: { image: 'x' } },
      ],
    };

    expect(mentionIdsOf(delta)).toEqual(['u2', 'u1']);
    expect(mentionIdsOf(deltaOf('@u1 is plain text'))).toEqual([]);
  });
});

describe('Messages: POST and PATCH take content, a message Delta, or both in step (resolveMessageText)', () => {
  it('answers undefined when neither was sent (an edit keeps the text)', () => {
    expect(resolveMessageText({})).toBeUndefined();
  });

  it('derives the Delta from content alone', () => {
    expect(resolveMessageText({ content: 'Looks good\r\n' })).toEqual({
      content: 'Looks good',
      delta: { ops: [{ insert: 'Looks good\n' }] },
    });
  });

  it('derives content from the Delta alone and keeps the Delta as sent', () => {
    const delta: Delta = { ops: [{ insert: 'Ask ' }, mention('u1', { name: 'Ada' }), { insert: '\n' }] };

    expect(resolveMessageText({ message: delta })).toEqual({ content: 'Ask @Ada', delta });
  });

  it('accepts both when content reads as the Delta does, after normalising newlines', () => {
    const delta: Delta = { ops: [{ insert: 'Ask ' }, mention('u1', { name: 'Ada' }), { insert: '\nnow\n' }] };

    expect(resolveMessageText({ message: delta, content: 'Ask @Ada\r\nnow\r\n' })).toEqual({ content: 'Ask @Ada\nnow', delta });
  });

  it('refuses both when they disagree, quoting each (abbreviated when long)', () => {
    const long = 'x'.repeat(100);

    expect(() => resolveMessageText({ message: deltaOf('one'), content: 'two' })).toThrow(TextMismatch);
    expect(() => resolveMessageText({ message: deltaOf('one'), content: 'two' })).toThrow(/"two".*"one"/);
    expect(() => resolveMessageText({ message: deltaOf('short'), content: long })).toThrow(`"${'x'.repeat(57)}..."`);
    expect(() => resolveMessageText({ message: deltaOf('one'), content: '' })).toThrow(TextMismatch);
  });
});

// ---------------------------------------------------------------------------------------------
// read-state.ts: readStateOf
// ---------------------------------------------------------------------------------------------

describe('States and transitions: "Thread or message unread" (readStateOf)', () => {
  const thread = makeThreadRecord({ id: 't1', number: 1 });
  const first = makeMessageRecord({ id: 'm1', createdAt: 100, modifiedAt: 100 });
  const second = makeMessageRecord({ id: 'm2', createdAt: 200, modifiedAt: 200 });
  const editedFirst = makeMessageRecord({ id: 'm1', createdAt: 100, modifiedAt: 300 });

  interface Case {
    name: string;
    messages: MessageRecord[];
    threadSeenAt?: number;
    messageSeenAt?: Record<string, number>;
    read: boolean;
    unreadMessageCount: number;
    lastSeenAt: number;
    perMessage: Record<string, { read: boolean; lastSeenAt: number }>;
  }

  const cases: Case[] = [
    {
      name: 'nothing marked: the thread and every message are unread, never seen',
      messages: [first, second],
      read: false,
      unreadMessageCount: 2,
      lastSeenAt: 0,
      perMessage: { m1: { read: false, lastSeenAt: 0 }, m2: { read: false, lastSeenAt: 0 } },
    },
    {
      name: 'thread marked after every message: read, each message seen at the thread mark',
      messages: [first, second],
      threadSeenAt: 250,
      read: true,
      unreadMessageCount: 0,
      lastSeenAt: 250,
      perMessage: { m1: { read: true, lastSeenAt: 250 }, m2: { read: true, lastSeenAt: 250 } },
    },
    {
      name: 'thread marked at the exact time of the last change: read (seen at or after)',
      messages: [first, second],
      threadSeenAt: 200,
      read: true,
      unreadMessageCount: 0,
      lastSeenAt: 200,
      perMessage: { m1: { read: true, lastSeenAt: 200 }, m2: { read: true, lastSeenAt: 200 } },
    },
    {
      name: 'thread marked before a reply: the reply alone is unread and so is the thread',
      messages: [first, second],
      threadSeenAt: 150,
      read: false,
      unreadMessageCount: 1,
      lastSeenAt: 150,
      perMessage: { m1: { read: true, lastSeenAt: 150 }, m2: { read: false, lastSeenAt: 150 } },
    },
    {
      name: 'every message marked but never the thread: no unread message, yet the thread is unread',
      messages: [first, second],
      messageSeenAt: { m1: 120, m2: 220 },
      read: false,
      unreadMessageCount: 0,
      lastSeenAt: 220,
      perMessage: { m1: { read: true, lastSeenAt: 120 }, m2: { read: true, lastSeenAt: 220 } },
    },
    {
      name: 'one message marked: that message is read, the thread is not',
      messages: [first, second],
      messageSeenAt: { m1: 120 },
      read: false,
      unreadMessageCount: 1,
      lastSeenAt: 120,
      perMessage: { m1: { read: true, lastSeenAt: 120 }, m2: { read: false, lastSeenAt: 0 } },
    },
    {
      name: 'an older thread mark completed by a newer message mark: read',
      messages: [first, second],
      threadSeenAt: 150,
      messageSeenAt: { m2: 260 },
      read: true,
      unreadMessageCount: 0,
      lastSeenAt: 260,
      perMessage: { m1: { read: true, lastSeenAt: 150 }, m2: { read: true, lastSeenAt: 260 } },
    },
    {
      name: 'a message edited after the thread mark is unread again',
      messages: [editedFirst, second],
      threadSeenAt: 250,
      read: false,
      unreadMessageCount: 1,
      lastSeenAt: 250,
      perMessage: { m1: { read: false, lastSeenAt: 250 }, m2: { read: true, lastSeenAt: 250 } },
    },
    {
      name: 'a message mark older than the edit does not cover the edit',
      messages: [editedFirst],
      threadSeenAt: 50,
      messageSeenAt: { m1: 299 },
      read: false,
      unreadMessageCount: 1,
      lastSeenAt: 299,
      perMessage: { m1: { read: false, lastSeenAt: 299 } },
    },
    {
      name: 'a thread without messages is read once marked',
      messages: [],
      threadSeenAt: 10,
      read: true,
      unreadMessageCount: 0,
      lastSeenAt: 10,
      perMessage: {},
    },
    {
      name: 'a thread without messages is unread until marked',
      messages: [],
      read: false,
      unreadMessageCount: 0,
      lastSeenAt: 0,
      perMessage: {},
    },
  ];

  it.each(cases)('$name', ({ messages, threadSeenAt, messageSeenAt, read, unreadMessageCount, lastSeenAt, perMessage }) => {
    const marks: ReadMark[] = [
      ...(threadSeenAt === undefined
        ? []
        : [
            {
              userId: 'reader',
              subject: 'thread' as const,
              subjectId: 't1',
              threadId: 't1',
              seenRevision: threadSeenAt,
              seenAt: threadSeenAt,
            },
          ]),
      ...Object.entries(messageSeenAt ?? {}).map(([id, seenAt]) => ({
        userId: 'reader',
        subject: 'message' as const,
        subjectId: id,
        threadId: 't1',
        seenRevision: seenAt,
        seenAt,
      })),
    ];

    const state = readStateOf(thread, messages, indexReadMarks(marks));

    expect({ read: state.read, unreadMessageCount: state.unreadMessageCount, lastSeenAt: state.lastSeenAt }).toEqual({
      read,
      unreadMessageCount,
      lastSeenAt,
    });
    expect(Object.fromEntries(state.messages)).toEqual(perMessage);
  });

  it('ignores marks of other threads and messages', () => {
    const marks = indexReadMarks([
      { userId: 'reader', subject: 'thread', subjectId: 'other-thread', threadId: 'other-thread', seenRevision: 999, seenAt: 999 },
      { userId: 'reader', subject: 'message', subjectId: 'other-message', threadId: 'other-thread', seenRevision: 999, seenAt: 999 },
    ]);

    const state = readStateOf(thread, [first], marks);

    expect(state).toMatchObject({ read: false, unreadMessageCount: 1, lastSeenAt: 0 });
  });

  it('indexes thread and message marks apart, even when a thread and a message share an id', () => {
    const index = indexReadMarks([
      { userId: 'reader', subject: 'thread', subjectId: 'same', threadId: 'same', seenRevision: 1, seenAt: 1 },
      { userId: 'reader', subject: 'message', subjectId: 'same', threadId: 'same', seenRevision: 2, seenAt: 2 },
    ]);

    expect(index.threads.get('same')?.seenRevision).toBe(1);
    expect(index.messages.get('same')?.seenRevision).toBe(2);
  });

  it('decides by revisions, not clocks: a change stamped earlier than the mark but made after it stays unread', () => {
    // A writer whose clock runs behind stamps its reply 900 although it landed after the mark (at 1000).
    const late = makeMessageRecord({ id: 'late', createdAt: 900, modifiedAt: 900, threadRevision: 3 });
    const marks = indexReadMarks([{ userId: 'reader', subject: 'thread', subjectId: 't1', threadId: 't1', seenRevision: 2, seenAt: 1000 }]);

    const state = readStateOf(thread, [makeMessageRecord({ id: 'm1', threadRevision: 1 }), late], marks);

    expect(state).toMatchObject({ read: false, unreadMessageCount: 1 });
    expect(state.messages.get('late')).toEqual({ read: false, lastSeenAt: 1000 });
  });

  it('reports a write as read for its writer (readStateOfWriter)', () => {
    const state = readStateOfWriter([first, second], 500);

    expect(state).toMatchObject({ read: true, unreadMessageCount: 0, lastSeenAt: 500 });
    expect(Object.fromEntries(state.messages)).toEqual({ m1: { read: true, lastSeenAt: 500 }, m2: { read: true, lastSeenAt: 500 } });
  });
});

// ---------------------------------------------------------------------------------------------
// thread-selection.ts
// ---------------------------------------------------------------------------------------------

describe('Enumerations: ThreadOrder (positionOf, comparePositions)', () => {
  const markup = makeMarkupRecord();

  it('compares positions left to right, a missing part counting as 0', () => {
    expect(comparePositions([1, 2], [1, 3])).toBeLessThan(0);
    expect(comparePositions([2], [1, 99])).toBeGreaterThan(0);
    expect(comparePositions([1, 2], [1, 2])).toBe(0);
    expect(comparePositions([1], [1, 0])).toBe(0);
    expect(comparePositions([-1], [])).toBeLessThan(0);
  });

  it('ends every position with the pin number, so no two threads of a markup tie', () => {
    const a = makeThreadRecord({ id: 'a', number: 1, priority: 5, startTime: 3, lastActivityAt: 10 });
    const b = makeThreadRecord({ id: 'b', number: 2, priority: 5, startTime: 3, lastActivityAt: 10 });

    for (const order of THREAD_ORDERS)
      expect(comparePositions(positionOf(a, order, markup), positionOf(b, order, markup)), order).not.toBe(0);
  });

  /** Threads sorted by an order, as numbers. */
  const sorted = (threads: ThreadRecord[], order: ThreadOrder, on = markup) =>
    [...threads].sort((a, b) => comparePositions(positionOf(a, order, on), positionOf(b, order, on))).map((thread) => thread.number);

  it('pin_asc and pin_desc order by pin number', () => {
    const threads = [3, 1, 2].map((number) => makeThreadRecord({ id: `t${number}`, number }));

    expect(sorted(threads, 'pin_asc')).toEqual([1, 2, 3]);
    expect(sorted(threads, 'pin_desc')).toEqual([3, 2, 1]);
  });

  it('activity puts the latest activity first, the higher pin first on a tie', () => {
    const threads = [
      makeThreadRecord({ id: 'a', number: 1, lastActivityAt: 100 }),
      makeThreadRecord({ id: 'b', number: 2, lastActivityAt: 300 }),
      makeThreadRecord({ id: 'c', number: 3, lastActivityAt: 200 }),
      makeThreadRecord({ id: 'd', number: 4, lastActivityAt: 300 }),
    ];

    expect(sorted(threads, 'activity')).toEqual([4, 2, 3, 1]);
  });

  it('timestamp orders by media time, earliest first (0 included), threads without one last by pin', () => {
    const threads = [
      makeThreadRecord({ id: 'a', number: 1, startTime: null }),
      makeThreadRecord({ id: 'b', number: 2, startTime: 12.5 }),
      makeThreadRecord({ id: 'c', number: 3, startTime: 0 }),
      makeThreadRecord({ id: 'd', number: 4 }),
      makeThreadRecord({ id: 'e', number: 5, startTime: 12.5 }),
    ];

    expect(sorted(threads, 'timestamp')).toEqual([3, 2, 5, 1, 4]);
  });

  it('priority_asc puts the lowest priority first (0 included) and threads without one last', () => {
    const threads = [
      makeThreadRecord({ id: 'a', number: 1, priority: null }),
      makeThreadRecord({ id: 'b', number: 2, priority: 10 }),
      makeThreadRecord({ id: 'c', number: 3, priority: 0 }),
      makeThreadRecord({ id: 'd', number: 4, priority: 10 }),
      makeThreadRecord({ id: 'e', number: 5, priority: null }),
    ];

    expect(sorted(threads, 'priority_asc')).toEqual([3, 2, 4, 1, 5]);
  });

  it('priority_desc puts the highest priority first and threads without one last, by pin', () => {
    const threads = [
      makeThreadRecord({ id: 'a', number: 1, priority: null }),
      makeThreadRecord({ id: 'b', number: 2, priority: 10 }),
      makeThreadRecord({ id: 'c', number: 3, priority: 0 }),
      makeThreadRecord({ id: 'd', number: 4, priority: 1000 }),
      makeThreadRecord({ id: 'e', number: 5, priority: 10 }),
    ];

    expect(sorted(threads, 'priority_desc')).toEqual([4, 2, 5, 3, 1]);
  });

  it('page orders PDF threads by page, image threads by the position of their image, others first', () => {
    const pdf = makeMarkupRecord({ type: 'pdf', images: undefined });
    const pdfThreads = [
      makeThreadRecord({ id: 'a', number: 1, kind: 'pdf', pageNumber: 3 }),
      makeThreadRecord({ id: 'b', number: 2, kind: 'pdf', pageNumber: 1 }),
      makeThreadRecord({ id: 'c', number: 3, kind: 'pdf', pageNumber: 3 }),
      makeThreadRecord({ id: 'd', number: 4, kind: 'pdf', pageNumber: 2 }),
    ];
    const imageThreads = [
      makeThreadRecord({ id: 'a', number: 1, projectImageId: IMAGE_TWO }),
      makeThreadRecord({ id: 'b', number: 2, projectImageId: IMAGE_ONE }),
      makeThreadRecord({ id: 'c', number: 3, projectImageId: 'unknown-image' }),
      makeThreadRecord({ id: 'd', number: 4, projectImageId: IMAGE_TWO }),
    ];

    expect(sorted(pdfThreads, 'page', pdf)).toEqual([2, 4, 1, 3]);
    expect(sorted(imageThreads, 'page')).toEqual([3, 2, 1, 4]);
    expect(positionOf(imageThreads[0]!, 'page', markup)).toEqual([2, 1]);
    expect(
      positionOf(
        makeThreadRecord({ id: 'w', number: 9, kind: 'webpage' }),
        'page',
        makeMarkupRecord({ type: 'webpage', images: undefined }),
      ),
    ).toEqual([0, 9]);
  });
});

describe('GET /threads viewMode filter (viewModeIdsOf)', () => {
  it('names the view mode ids of a category or of one view mode id, and none for anything else', () => {
    expect(viewModeIdsOf('desktop')).toEqual(new Set([DESKTOP]));
    expect(viewModeIdsOf('tablet')).toEqual(new Set([TABLET]));
    expect(viewModeIdsOf(MOBILE)).toEqual(new Set([MOBILE]));
    expect(viewModeIdsOf('no-such-mode')).toBeUndefined();
  });
});
