import { beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.js';
import type { MessageRecord } from '../../shared/db/messages.js';
import { readMarksUpdate, toReadMarkItems, type ReadMark } from '../../shared/db/read-marks.js';
import { EMBEDDED_MESSAGES_LIMIT, messagesFit, threadRevisionUpdate, type ThreadRecord } from '../../shared/db/threads.js';

/**
 * Layout 3's two pure parts: what a message change does to its thread's copy of its messages
 * (`threadRevisionUpdate`), and how one reader's marks on a thread are one item (`read-marks.ts`).
 */

beforeAll(() => {
  process.env.TABLE_NAME ??= 'unit-table';
  resetConfig();
});

const message = (id: string, content = `Message ${id}`): MessageRecord => ({
  id,
  threadId: 't1',
  markupId: 'm1',
  workspaceId: 'w1',
  organizationId: 'o1',
  userId: 'u1',
  createdAt: 1,
  modifiedAt: 1,
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
    const long = message('d', 'x'.repeat(EMBEDDED_MESSAGES_LIMIT / 4));
    const { expression, values } = partsOf(
      threadRevisionUpdate(thread({ messages: [a, long], messageIds: ['a', 'd'] }), 9, { message: { put: { ...long, id: 'e' } } }),
    );

    expect(messagesFit([a, long])).toBe(true);
    expect(messagesFit([a, long, { ...long, id: 'e' }])).toBe(false);
    expect(expression).toBe('SET revision = :next, lastActivityAt = :at, messageIds = :ids REMOVE messages');
    expect(values[':ids']).toEqual(['a', 'd', 'e']);
    expect(values).not.toHaveProperty(':messages');
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
