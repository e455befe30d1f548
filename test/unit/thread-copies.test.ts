import { beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.js';
import type { MessageRecord } from '../../shared/db/messages.js';
import { latestOf, readMarksUpdate, toReadMarkItems, type ReadMark } from '../../shared/db/read-marks.js';
import {
  copyFits,
  copyIsCurrent,
  THREAD_ITEM_WITH_COPY_LIMIT,
  threadReplace,
  threadRevisionUpdate,
  type ThreadRecord,
} from '../../shared/db/threads.js';

/**
 * Layout 3's two pure parts: what a message change does to its thread's copy of its messages
 * (`threadRevisionUpdate`), and how one reader's marks on a thread are one item (`read-marks.ts`).
 */

beforeAll(() => {
  process.env.TABLE_NAME ??= 'unit-table';
  resetConfig();
});

const message = (id: string, content = `Message ${id}`, createdAt = 1): MessageRecord => ({
  id,
  threadId: 't1',
  markupId: 'm1',
  workspaceId: 'w1',
  organizationId: 'o1',
  userId: 'u1',
  createdAt,
  modifiedAt: createdAt,
  modifiedBy: 'u1',
  threadRevision: 1,
  content,
  delta: { ops: [{ insert: `${content}\n` }] },
  mentionIds: [],
  attachments: [],
  clipVideos: [],
});

const thread = (extra: Partial<ThreadRecord>): ThreadRecord =>
  ({ id: 't1', markupId: 'm1', revision: 4, lastActivityAt: 1, ...extra }) as ThreadRecord;

/** The SET and REMOVE of an update, and its values. */
function partsOf(item: ReturnType<typeof threadRevisionUpdate>) {
  const update = item.Update!;
  return { expression: update.UpdateExpression!, values: update.ExpressionAttributeValues!, condition: update.ConditionExpression };
}

describe("a thread's copy of its messages (threadRevisionUpdate)", () => {
  const [a, b, c] = [message('a'), message('b'), message('c')];

  it('appends a new message to the copy and to messageIds, at the next revision and only at the one read', () => {
    const { expression, values, condition } = partsOf(
      threadRevisionUpdate(thread({ messages: [a, b], messageIds: ['a', 'b'] }), 9, { message: { put: c } }),
    );

    expect(expression).toBe('SET revision = :next, lastActivityAt = :at, messageIds = :ids, messages = :messages');
    expect(values).toMatchObject({ ':revision': 4, ':next': 5, ':at': 9, ':ids': ['a', 'b', 'c'], ':messages': [a, b, c] });
    expect(condition).toBe('revision = :revision');
  });

  it('replaces an edited message where it stands, and takes a deleted one out', () => {
    const edited = { ...b, content: 'Edited', threadRevision: 5 };
    const replaced = partsOf(
      threadRevisionUpdate(thread({ messages: [a, b, c], messageIds: ['a', 'b', 'c'] }), 9, { message: { put: edited } }),
    );
    const deleted = partsOf(
      threadRevisionUpdate(thread({ messages: [a, b, c], messageIds: ['a', 'b', 'c'] }), 9, { message: { delete: 'b' } }),
    );

    expect(replaced.values[':messages']).toEqual([a, edited, c]);
    expect(replaced.values[':ids']).toEqual(['a', 'b', 'c']);
    expect(deleted.values[':messages']).toEqual([a, c]);
    expect(deleted.values[':ids']).toEqual(['a', 'c']);
  });

  it('removes the copy when the messages would pass the limit, keeping messageIds', () => {
    // Content and its Delta: each long message weighs half the limit and a little more.
    const long = message('d', 'x'.repeat(THREAD_ITEM_WITH_COPY_LIMIT / 4));
    const { expression, values } = partsOf(
      threadRevisionUpdate(thread({ messages: [a, long], messageIds: ['a', 'd'] }), 9, { message: { put: { ...long, id: 'e' } } }),
    );

    expect(copyFits(thread({}), [a, long])).toBe(true);
    expect(copyFits(thread({}), [a, long, { ...long, id: 'e' }])).toBe(false);
    expect(expression).toBe('SET revision = :next, lastActivityAt = :at, messageIds = :ids REMOVE messages');
    expect(values[':ids']).toEqual(['a', 'd', 'e']);
    expect(values).not.toHaveProperty(':messages');
  });

  it("counts the rest of the thread item: a webpage thread's elements and parents leave less room for the copy", () => {
    const elements = Array.from({ length: 50 }, (_, i) => ({
      id: `e${i}`,
      path: 'p'.repeat(2_000),
      offsetXPercentage: 1,
      offsetYPercentage: 1,
    }));
    const parents = Array.from({ length: 100 }, (_, i) => ({
      id: `p${i}`,
      path: 'q'.repeat(1_000),
      depth: i,
      url: 'u',
      canonicalUrl: 'u',
    }));
    const big = thread({ elements, parents, messages: [a], messageIds: ['a'] } as Partial<ThreadRecord>);
    const reply = message('r', 'x'.repeat(THREAD_ITEM_WITH_COPY_LIMIT / 5));

    expect(copyFits(thread({}), [a, reply])).toBe(true);
    expect(copyFits(big, [a, reply])).toBe(false);
    expect(partsOf(threadRevisionUpdate(big, 9, { message: { put: reply } })).expression).toContain('REMOVE messages');
  });

  it('keeps the copy in creation order when a reply that drew an earlier time commits after a later one', () => {
    const early = message('z-early', 'Early', 5);
    const late = message('a-late', 'Late', 6);
    const { values } = partsOf(
      threadRevisionUpdate(thread({ messages: [a, late], messageIds: ['a', 'a-late'] }), 9, { message: { put: early } }),
    );

    expect((values[':messages'] as MessageRecord[]).map((entry) => entry.id)).toEqual(['a', 'z-early', 'a-late']);
    expect(values[':ids']).toEqual(['a', 'z-early', 'a-late']);
  });

  it('a Put of a changed thread drops a copy that no longer fits it, keeping messageIds', () => {
    const before = thread({ messages: [a], messageIds: ['a'] });
    const grown = {
      ...before,
      elements: [{ id: 'e', path: 'p'.repeat(THREAD_ITEM_WITH_COPY_LIMIT), offsetXPercentage: 1, offsetYPercentage: 1 }],
    };
    const item = threadReplace(before, grown as ThreadRecord).Put!.Item!;
    const kept = threadReplace(before, { ...before, resolved: true }).Put!.Item!;

    expect(item).not.toHaveProperty('messages');
    expect(item.messageIds).toEqual(['a']);
    expect(kept.messages).toEqual([a]);
  });

  it('tells a current copy from one an older release left behind (a message missing, edited, or deleted since)', () => {
    const edited = { ...b, threadRevision: 7, modifiedAt: 7 };

    expect(copyIsCurrent(thread({ messages: [a, b], messageIds: ['a', 'b'] }), [b, a])).toBe(true);
    expect(copyIsCurrent(thread({ messages: [a], messageIds: ['a', 'b'] }), [a, b])).toBe(false);
    expect(copyIsCurrent(thread({ messages: [a, b], messageIds: ['a', 'b'] }), [a, edited])).toBe(false);
    expect(copyIsCurrent(thread({ messages: [a, b], messageIds: ['a', 'b'] }), [a])).toBe(false);
    expect(copyIsCurrent(thread({ messageIds: ['a'] }), [a])).toBe(false);
  });

  it('moves only messageIds of a thread without a copy, and neither of a thread without both', () => {
    const idsOnly = partsOf(threadRevisionUpdate(thread({ messageIds: ['a'] }), 9, { message: { put: b } }));
    const neither = partsOf(threadRevisionUpdate(thread({}), 9, { message: { put: b } }));

    expect(idsOnly.expression).toBe('SET revision = :next, lastActivityAt = :at, messageIds = :ids');
    expect(idsOnly.values[':ids']).toEqual(['a', 'b']);
    expect(neither.expression).toBe('SET revision = :next, lastActivityAt = :at');
  });

  it('changes a priority without touching the copy when no message changed', () => {
    const { expression, values } = partsOf(threadRevisionUpdate(thread({ messages: [a], messageIds: ['a'] }), 9, { priority: 2 }));

    expect(expression).toBe('SET revision = :next, lastActivityAt = :at, priority = :priority, modifiedAt = :at');
    expect(values[':priority']).toBe(2);
  });
});

describe("one reader's marks on a thread are one item (read-marks.ts)", () => {
  const mark = (subject: ReadMark['subject'], subjectId: string, seenRevision: number): ReadMark => ({
    userId: 'u1',
    subject,
    subjectId,
    threadId: 't1',
    seenRevision,
    seenAt: 100 + seenRevision,
  });

  it("writes a thread's and its messages' marks with one Update of the thread's item, never a Put", () => {
    const item = readMarksUpdate('m1', [mark('thread', 't1', 1), mark('message', 'a', 1)]).Update!;

    expect(item.Key).toEqual({ PK: 'MARKUP#m1', SK: 'READ#u1#t1' });
    expect(item.UpdateExpression).toContain('seenRevision = :threadRevision');
    expect(item.UpdateExpression).toContain('#m1 = :m1');
    expect(item.ExpressionAttributeNames).toEqual({ '#m1': 'm:a' });
    expect(item.ExpressionAttributeValues![':m1']).toEqual({ seenRevision: 1, seenAt: 101 });
  });

  it('refuses marks of two threads or two readers in one update (a transaction names an item once)', () => {
    expect(() => readMarksUpdate('m1', [mark('thread', 't1', 1), { ...mark('message', 'a', 1), threadId: 't2' }])).toThrow();
    expect(() => readMarksUpdate('m1', [mark('thread', 't1', 1), { ...mark('message', 'a', 1), userId: 'u2' }])).toThrow();
    expect(() => readMarksUpdate('m1', [])).toThrow();
  });

  it('answers one mark a subject, the later by revision and then time, when a legacy item and an attribute both mark a message', () => {
    const legacy = mark('message', 'a', 3);
    const newer = { ...mark('message', 'a', 4), seenAt: 50 };
    const sameLater = { ...mark('message', 'a', 3), seenAt: 500 };

    expect(latestOf([newer, legacy])).toEqual([newer]);
    expect(latestOf([legacy, newer])).toEqual([newer]);
    expect(latestOf([legacy, sameLater])).toEqual([sameLater]);
    expect(latestOf([mark('thread', 't1', 2), legacy])).toHaveLength(2);
  });

  it('stores every mark of a reader on a thread in one item, as the updates leave it', () => {
    const items = toReadMarkItems('m1', [
      mark('thread', 't1', 3),
      mark('message', 'a', 1),
      mark('message', 'b', 2),
      { ...mark('message', 'c', 1), userId: 'u2' },
    ]);

    expect(items).toEqual([
      {
        PK: 'MARKUP#m1',
        SK: 'READ#u1#t1',
        entity: 'ReadMark',
        markupId: 'm1',
        userId: 'u1',
        threadId: 't1',
        subject: 'thread',
        subjectId: 't1',
        seenRevision: 3,
        seenAt: 103,
        'm:a': { seenRevision: 1, seenAt: 101 },
        'm:b': { seenRevision: 2, seenAt: 102 },
      },
      {
        PK: 'MARKUP#m1',
        SK: 'READ#u2#t1',
        entity: 'ReadMark',
        markupId: 'm1',
        userId: 'u2',
        threadId: 't1',
        'm:c': { seenRevision: 1, seenAt: 101 },
      },
    ]);
  });
});
