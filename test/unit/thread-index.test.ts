import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { MarkupRecord } from '../../shared/db/items.js';
import {
  fromSortableNumber,
  leafFilter,
  leafOf,
  pageCopyItem,
  pageCopyRecord,
  positionIn,
  sortableNumber,
  threadNumberAt,
} from '../../shared/db/thread-index.js';
import { isTimeOrderedId, timeOrderedId } from '../../shared/db/core/ids.js';
import type { ThreadRecord } from '../../shared/db/threads.js';
import { comparePositions, positionOf, THREAD_ORDERS } from '../../shared/domain/comments/thread-selection.js';
import { ORDER_PLANS } from '../../shared/domain/comments/thread-pages.js';

/** The thread index's sort keys order threads exactly as the in-memory order (`positionOf`) does. */

const markup = { images: [{ id: 'img-a' }, { id: 'img-b' }, { id: 'img-c' }] } as unknown as MarkupRecord;

/** A deterministic spread of threads: ties, nulls, negatives, fractions, pages and images. */
function threads(): ThreadRecord[] {
  let seed = 7;
  const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  return Array.from({ length: 300 }, (_, i) => {
    const pick = next();
    return {
      id: `t${i}`,
      number: i + 1,
      lastActivityAt: 1_700_000_000_000 + Math.floor(next() * 50),
      resolved: next() < 0.3,
      priority: pick < 0.3 ? null : Math.floor(next() * 7) - (pick < 0.4 ? 3 : 0) + (pick > 0.9 ? 0.5 : 0),
      startTime: pick < 0.5 ? null : Math.floor(next() * 5) + (pick > 0.8 ? 0.25 : 0),
      pageNumber: pick < 0.2 ? Math.ceil(next() * 4) : null,
      projectImageId: pick > 0.7 ? ['img-a', 'img-b', 'img-c', 'img-x'][Math.floor(next() * 4)] : null,
    } as unknown as ThreadRecord;
  });
}

describe('thread index positions', () => {
  it('encodes numbers so that byte order is numeric order', () => {
    const values = [-1e12, -3.5, -1, -0.25, 0, 0.25, 1, 2, 10, 1000, 1_700_000_000_000, Number.MAX_SAFE_INTEGER];
    const encoded = values.map(sortableNumber);
    expect([...encoded].sort()).toEqual(encoded);
    expect(encoded.every((code) => /^[0-9a-f]{16}$/.test(code))).toBe(true);
    expect(sortableNumber(-0)).toBe(sortableNumber(0));
    expect(encoded.map(fromSortableNumber)).toEqual(values);
  });

  it('reads the thread number back from a position of every kind', () => {
    for (const thread of threads())
      for (const kind of ['pin', 'page', 'time', 'prio', 'prioDesc', 'act'] as const)
        expect(threadNumberAt(positionIn(kind, thread, markup))).toBe(thread.number);
  });

  it('makes ids that sort by their time and says which ids are its own', () => {
    const times = [0, 1, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 2 ** 48 - 1];
    const ids = times.map((at) => timeOrderedId(at));
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every(isTimeOrderedId)).toBe(true);
    expect(isTimeOrderedId(randomUUID())).toBe(false);
    expect(isTimeOrderedId(timeOrderedId().toUpperCase())).toBe(false);
  });

  it.each(THREAD_ORDERS)('sorts threads in %s order as the list always did', (order) => {
    const plan = ORDER_PLANS[order];
    const all = threads();
    const expected = [...all]
      .sort((a, b) => comparePositions(positionOf(a, order, markup), positionOf(b, order, markup)))
      .map((thread) => thread.number);
    const byKey = [...all]
      .map((thread) => ({ number: thread.number, key: positionIn(plan.kind, thread, markup) }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) * (plan.backward ? -1 : 1))
      .map((entry) => entry.number);
    expect(byKey).toEqual(expected);
  });

  it('names leaves by resolved state and view mode, and reads them back', () => {
    expect(leafOf(true, 'vm-1')).toBe('R.vm-1');
    expect(leafOf(false, undefined)).toBe('O.-');
    expect(leafFilter('R.vm-1')).toEqual({ resolved: true, viewModeId: 'vm-1' });
    expect(leafFilter('O.-')).toEqual({ resolved: false, viewModeId: undefined });
  });
});

describe('page copies (layout 4): one string a thread', () => {
  const thread = {
    id: 'thread-1',
    markupId: 'markup-1',
    workspaceId: 'ws-1',
    organizationId: 'org-1',
    number: 7,
    revision: 3,
    resolved: false,
    priority: null,
    browserContext: { os: 'Linux', screenWidth: 1920 },
  } as unknown as ThreadRecord;
  const message = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    threadId: 'thread-1',
    markupId: 'markup-1',
    workspaceId: 'ws-1',
    organizationId: 'org-1',
    content: `Message ${id}`,
    mentionIds: [],
    ...extra,
  });
  const roundTrip = (record: ThreadRecord) => pageCopyRecord(pageCopyItem(record));

  it('gives back every thread as it was written: with messages, without, and with a message that repeats not all of its thread', () => {
    const cases = [
      { ...thread, messages: [message('a'), message('b', { attachments: [{ id: 'x', size: 3 }] })] },
      { ...thread, messageIds: ['a', 'b'] },
      { ...thread, messages: [message('a'), message('b', { workspaceId: 'ws-0' })] },
      { ...thread, messages: [message('a'), (({ organizationId: _gone, ...rest }) => rest)(message('b'))] },
    ] as unknown as ThreadRecord[];
    for (const record of cases) expect(roundTrip(record)).toStrictEqual(record);
  });

  it('leaves out of each message what it repeats of its thread only when every message repeats all of it', () => {
    const shared = pageCopyItem({ ...thread, messages: [message('a'), message('b')] } as unknown as ThreadRecord);
    expect(shared).toMatchObject({ id: 'thread-1', number: 7, revision: 3, messagesRepeatThread: true });
    expect(shared.record).not.toContain('"threadId"');
    const apart = pageCopyItem({ ...thread, messages: [message('a'), message('b', { markupId: 'markup-0' })] } as unknown as ThreadRecord);
    expect(apart.messagesRepeatThread).toBeUndefined();
    expect(JSON.parse(apart.record as string).messages[0].threadId).toBe('thread-1');
  });

  it('copies a record whose string would outweigh its item as its attributes, and reads it back', () => {
    const messageIds = Array.from({ length: 12_000 }, (_, i) => `"quoted" message id ${i}`);
    const record = { ...thread, messageIds } as unknown as ThreadRecord;
    const item = pageCopyItem(record);
    expect(item.record).toBeUndefined();
    expect(item).toMatchObject({ PK: 'TIX#markup-1#pin#*', SK: sortableNumber(7), entity: 'ThreadPageCopy', messageIds });
    expect(pageCopyRecord(item)).toStrictEqual(record);
  });

  it("reads a copy of layout 4's first release, the record's own attributes", () => {
    const record = { ...thread, messages: [message('a')] } as unknown as ThreadRecord;
    expect(pageCopyRecord({ PK: 'TIX#markup-1#pin#*', SK: sortableNumber(7), entity: 'ThreadPageCopy', ...record })).toStrictEqual(record);
  });
});
