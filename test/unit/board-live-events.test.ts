import { describe, expect, it } from 'vitest';
import { BoardStore } from '../../web/board/store.js';
import type { BoardTransport } from '../../web/board/transport.js';
import type { Thread } from '../../web/board/types.js';
import { eventually } from '../support/polling.js';

/**
 * How the board's store takes live events (web/live → BoardStore.applyEvent): a resolve or reopen
 * of a known thread at once from the event, anything else by reading that one thread again (the
 * viewer's scopes and read state), a burst gathered (each thread read once; many threads: the list
 * once), a thread gone by then removed, and the open thread's new reply not left unread.
 */

const thread = (number: number, extra: Partial<Thread> = {}): Thread => ({
  id: `t${number}`,
  number,
  resolved: false,
  createdAt: number,
  user: { id: 'u', name: 'U' },
  scopes: ['reply'],
  messages: [],
  read: true,
  unreadMessageCount: 0,
  ...extra,
});

function transport(server: Map<string, Thread>) {
  const calls: string[] = [];
  const fake = {
    listThreads: async () => {
      calls.push('list');
      return [...server.values()];
    },
    getThread: async (id: string) => {
      calls.push(`get ${id}`);
      const found = server.get(id);
      if (!found) throw Object.assign(new Error('Not found'), { status: 404 });
      return found;
    },
    markRead: async (id: string) => void calls.push(`read ${id}`),
  } as unknown as BoardTransport;
  return { fake, calls };
}

const commentEvent = (type: string, comment: Record<string, unknown> | null) => ({
  type,
  data: { comment: comment as { id: string } | null },
});
const settled = (calls: string[], count: number) =>
  eventually(
    async () => calls.length,
    (length) => length >= count,
    5_000,
    2,
  );

describe('the board store and live events', () => {
  it("a new thread and a reply are read again once each, with the viewer's read state; a resolve is applied from the event", async () => {
    const server = new Map([['t1', thread(1)]]);
    const { fake, calls } = transport(server);
    const store = new BoardStore(fake, 'm');
    await store.load();
    server.set(
      't2',
      thread(2, {
        read: false,
        messages: [{ id: 'x', createdAt: 1, modifiedAt: 1, content: 'New', user: { id: 'o', name: 'O' }, scopes: [] }],
      }),
    );
    // Three events of t2 in one burst: one read.
    for (const type of ['comment_created', 'comment_updated', 'comment_reply_created'])
      store.applyEvent(commentEvent(type, { id: 't2', scopes: ['owner-only'] }));
    await settled(calls, 2);
    expect(calls).toEqual(['list', 'get t2']);
    expect(store.get().threads.map((known) => [known.number, known.read, known.scopes])).toEqual([
      [1, true, ['reply']],
      [2, false, ['reply']],
    ]);
    store.applyEvent(commentEvent('comment_resolved', { id: 't1', resolved: true, lastActivityAt: 9 }));
    expect(store.get().threads[0]).toMatchObject({ resolved: true, lastActivityAt: 9 });
    expect(calls).toEqual(['list', 'get t2']);
  });

  it('a reply to the open thread is marked read; a thread deleted meanwhile goes; many threads at once read the list once', async () => {
    const server = new Map([
      ['t1', thread(1)],
      ['t2', thread(2)],
    ]);
    const { fake, calls } = transport(server);
    const store = new BoardStore(fake, 'm');
    await store.load();
    store.open('t1');
    server.set('t1', thread(1, { read: false, unreadMessageCount: 1 }));
    server.delete('t2');
    store.applyEvent(commentEvent('comment_reply_created', { id: 't1' }));
    store.applyEvent(commentEvent('comment_updated', { id: 't2' }));
    await settled(calls, 4);
    expect(calls.slice(1).sort()).toEqual(['get t1', 'get t2', 'read t1']);
    expect(store.get().threads.map((known) => [known.id, known.read])).toEqual([['t1', true]]);

    for (let number = 3; number <= 20; number++) {
      server.set(`t${number}`, thread(number));
      store.applyEvent(commentEvent('comment_created', { id: `t${number}` }));
    }
    await settled(calls, 5);
    expect(calls.slice(4)).toEqual(['list']);
    await eventually(
      async () => store.get().threads.length,
      (length) => length === 19,
      5_000,
      2,
    );
  });
});
