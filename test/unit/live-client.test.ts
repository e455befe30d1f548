import { describe, expect, it } from 'vitest';
import type { Request } from '../../web/board/transport.js';
import { backoffDelay, LiveClient, type LiveEvent, type LiveState, type SocketFactory } from '../../web/live/client.js';
import { eventually } from '../support/polling.js';

/**
 * web/live's client against the contract of DESIGN.md "Live updates", with a socket and an API
 * played by the test: tickets are asked for each socket, subscriptions carry `after` = the last
 * seq handed over, events are handed over once and in seq order whatever order and repeats the
 * socket brings, and what the socket does not replay after a reconnect is read from the event log.
 */

interface Sent {
  type: string;
  markupId: string;
  after?: number;
}

class FakeSocket {
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: Sent[] = [];
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: unknown) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }

  send(data: string) {
    this.sent.push(JSON.parse(data) as Sent);
  }

  close() {
    this.readyState = 3;
  }

  open() {
    this.readyState = 1;
    this.onopen?.({});
  }

  /** The server closes the socket (or the network drops it). */
  drop() {
    this.readyState = 3;
    this.onclose?.({});
  }

  message(body: unknown) {
    this.onmessage?.({ data: JSON.stringify(body) });
  }
}

const event = (seq: number): LiveEvent => ({
  id: `event-${seq}`,
  type: 'comment_created',
  workspaceId: 'ws',
  createdAt: new Date(0).toISOString(),
  data: { comment: { id: `thread-${seq}` } },
});

/** The API: numbered tickets, and the event log of one markup (seqs 1..`log`). */
function api(options: { log?: () => number; failEvents?: boolean } = {}) {
  const calls: string[] = [];
  let tickets = 0;
  const request = (async (path: string, init?: { method?: string }) => {
    calls.push(`${init?.method ?? 'GET'} ${path}`);
    if (path === '/live/tickets')
      return { url: `ws://127.0.0.1:1/api/v2/live?ticket=t${++tickets}`, expiresAt: new Date(Date.now() + 60_000).toISOString() };
    const match = /^\/markups\/([^/]+)\/events\?after=(\d+)&limit=(\d+)$/.exec(path);
    if (match) {
      if (options.failEvents) throw Object.assign(new Error('gone'), { status: 404 });
      const after = Number(match[2]);
      const limit = Number(match[3]);
      const last = options.log?.() ?? 0;
      const data = [];
      for (let seq = after + 1; seq <= Math.min(last, after + limit); seq++) data.push({ seq, event: event(seq) });
      return { data, hasMore: after + limit < last, nextCursor: null };
    }
    throw new Error(`unexpected ${path}`);
  }) as Request;
  return { request, calls };
}

const latest = () => FakeSocket.all.at(-1)!;

/** The page's window, for its events (`online`, `securitypolicyviolation`): Node has none. */
const page = new EventTarget();
Object.assign(globalThis, { addEventListener: page.addEventListener.bind(page), removeEventListener: page.removeEventListener.bind(page) });
// Every 2 ms: the client's timers here are 5 to 150 ms, and 100 ms steps made this the unit project's slowest file.
const until = <T>(read: () => T, done: (value: T) => boolean) => eventually(async () => read(), done, 5_000, 2);

function client(request: Request, extra: Partial<ConstructorParameters<typeof LiveClient>[1]> = {}) {
  FakeSocket.all = [];
  const live = new LiveClient(request, {
    WebSocket: FakeSocket as unknown as SocketFactory,
    baseDelayMs: 5,
    maxDelayMs: 20,
    catchUpGraceMs: 20,
    random: () => 0.5,
    ...extra,
  });
  const states: LiveState[] = [];
  live.onState((state) => states.push(state));
  return { live, states };
}

describe('web/live: the live-update client', () => {
  it('asks for a ticket, subscribes without after, starts over on `subscribed` and hands over events once and in seq order', async () => {
    const { request, calls } = api({ log: () => 5 });
    const { live, states } = client(request);
    const got: number[] = [];
    let resyncs = 0;
    live.subscribe('m1', { onEvent: (_event, seq) => got.push(seq), onResync: () => resyncs++ });
    await until(
      () => FakeSocket.all.length,
      (count) => count === 1,
    );
    expect(latest().url).toBe('ws://127.0.0.1:1/api/v2/live?ticket=t1');
    latest().open();
    expect(latest().sent).toEqual([{ type: 'subscribe', markupId: 'm1' }]);
    expect(live.state).toBe('connecting');
    latest().message({ type: 'subscribed', markupId: 'm1', seq: 2 });
    expect(resyncs).toBe(1);
    expect(live.state).toBe('live');
    // Repeats and seqs already seen are dropped; 5 before 4 waits for 4 (read from the log).
    for (const seq of [2, 3, 3, 5]) latest().message({ type: 'event', markupId: 'm1', seq, event: event(seq) });
    await until(
      () => got,
      (seqs) => seqs.length === 3,
    );
    latest().message({ type: 'event', markupId: 'm1', seq: 4, event: event(4) });
    latest().message({ type: 'event', markupId: 'm1', seq: 6, event: event(6) });
    expect(got).toEqual([3, 4, 5, 6]);
    expect(calls.filter((call) => call.includes('/events'))).toEqual(['GET /markups/m1/events?after=3&limit=100']);
    // Another markup's messages, and malformed ones, are nobody's.
    latest().message({ type: 'event', markupId: 'other', seq: 7, event: event(7) });
    latest().onmessage?.({ data: 'not json' });
    expect(got).toEqual([3, 4, 5, 6]);
    expect(states).toEqual(['connecting', 'live']);
    live.close();
  });

  it('reconnects after a drop with a NEW ticket and after = the last seq, and reads from the log what the socket does not replay', async () => {
    let head = 3;
    const { request, calls } = api({ log: () => head });
    const { live, states } = client(request);
    const got: number[] = [];
    live.subscribe('m1', (_event, seq) => got.push(seq));
    await until(
      () => FakeSocket.all.length,
      (count) => count === 1,
    );
    latest().open();
    latest().message({ type: 'subscribed', markupId: 'm1', seq: 3 });
    latest().drop();
    expect(live.state).toBe('reconnecting');
    head = 6; // three comments while away
    await until(
      () => FakeSocket.all.length,
      (count) => count === 2,
    );
    expect(latest().url).toBe('ws://127.0.0.1:1/api/v2/live?ticket=t2');
    latest().open();
    expect(latest().sent).toEqual([{ type: 'subscribe', markupId: 'm1', after: 3 }]);
    // The server replays one of them, then answers where the log is; the log gives the others, once each.
    latest().message({ type: 'event', markupId: 'm1', seq: 4, event: event(4) });
    latest().message({ type: 'subscribed', markupId: 'm1', seq: 6 });
    expect(live.state).toBe('reconnecting');
    await until(
      () => live.state,
      (state) => state === 'live',
    );
    latest().message({ type: 'event', markupId: 'm1', seq: 5, event: event(5) });
    latest().message({ type: 'event', markupId: 'm1', seq: 7, event: event(7) });
    expect(got).toEqual([4, 5, 6, 7]);
    expect(calls.filter((call) => call === 'POST /live/tickets')).toHaveLength(2);
    expect(states).toEqual(['connecting', 'live', 'reconnecting', 'live']);
    live.close();
  });

  it('after a reconnect, what the server replays within the grace is enough: the log is not read', async () => {
    const { request, calls } = api({ log: () => 5 });
    const { live } = client(request, { catchUpGraceMs: 60_000 });
    const got: number[] = [];
    live.subscribe('m1', (_event, seq) => got.push(seq));
    await until(
      () => FakeSocket.all.length,
      (count) => count === 1,
    );
    latest().open();
    latest().message({ type: 'subscribed', markupId: 'm1', seq: 2 });
    latest().drop();
    await until(
      () => FakeSocket.all.length,
      (count) => count === 2,
    );
    latest().open();
    latest().message({ type: 'subscribed', markupId: 'm1', seq: 5 });
    expect(live.state).toBe('reconnecting');
    for (const seq of [3, 4, 5]) latest().message({ type: 'event', markupId: 'm1', seq, event: event(seq) });
    expect(got).toEqual([3, 4, 5]);
    expect(live.state).toBe('live');
    expect(calls.filter((call) => call.includes('/events'))).toEqual([]);
    live.close();
  });

  it('keeps trying with backoff while tickets fail, and a socket that never opens is given up', async () => {
    let failures = 3;
    const { request: base, calls } = api();
    const request = (async (path: string, init?: { method?: 'POST' }) => {
      if (path === '/live/tickets' && failures-- > 0) {
        calls.push('refused');
        throw new Error('The service could not be reached.');
      }
      return base(path, init);
    }) as Request;
    const { live } = client(request, { openTimeoutMs: 30 });
    live.subscribe('m1', () => undefined);
    await until(
      () => FakeSocket.all.length,
      (count) => count >= 1,
    );
    expect(calls.filter((call) => call === 'refused')).toHaveLength(3);
    expect(live.state).toBe('reconnecting');
    // Never opened: given up after openTimeoutMs, a new ticket, a new socket.
    await until(
      () => FakeSocket.all.length,
      (count) => count >= 2,
    );
    expect(FakeSocket.all[0]!.readyState).toBe(3);
    live.close();
  });

  it('a refused subscription is reported and not sent again; the last unsubscribe closes the socket', async () => {
    const { request } = api();
    const { live } = client(request);
    const refusals: [number, string][] = [];
    const stopRefused = live.subscribe('secret', {
      onEvent: () => undefined,
      onRefused: (status, detail) => refusals.push([status, detail]),
    });
    const stop = live.subscribe('m1', () => undefined);
    await until(
      () => FakeSocket.all.length,
      (count) => count === 1,
    );
    latest().open();
    latest().message({ type: 'error', markupId: 'secret', status: 403, detail: 'You may not read this markup.' });
    latest().message({ type: 'subscribed', markupId: 'm1', seq: 0 });
    expect(refusals).toEqual([[403, 'You may not read this markup.']]);
    expect(live.state).toBe('live');
    latest().drop();
    await until(
      () => FakeSocket.all.length,
      (count) => count === 2,
    );
    latest().open();
    expect(latest().sent).toEqual([{ type: 'subscribe', markupId: 'm1', after: 0 }]);
    stopRefused();
    stop();
    expect(latest().readyState).toBe(3);
    expect(live.state).toBe('closed');
  });

  it('when the log cannot fill a gap, the listeners start over from the state as it is', async () => {
    const { request } = api({ failEvents: true });
    const { live } = client(request);
    const got: number[] = [];
    let resyncs = 0;
    live.subscribe('m1', { onEvent: (_event, seq) => got.push(seq), onResync: () => resyncs++ });
    await until(
      () => FakeSocket.all.length,
      (count) => count === 1,
    );
    latest().open();
    latest().message({ type: 'subscribed', markupId: 'm1', seq: 1 });
    latest().message({ type: 'event', markupId: 'm1', seq: 4, event: event(4) });
    await until(
      () => resyncs,
      (count) => count === 2,
    );
    latest().message({ type: 'event', markupId: 'm1', seq: 5, event: event(5) });
    expect(got).toEqual([5]);
    live.close();
  });

  it('a socket the page refuses (a securitypolicyviolation, or a SecurityError) is replaced by the event log, read every pollMs, live meanwhile; the socket is tried again and takes over', async () => {
    let head = 2;
    const { request, calls } = api({ log: () => head });
    const { live, states } = client(request, { pollMs: 10, socketRetryMs: 150 });
    const got: number[] = [];
    let resyncs = 0;
    live.subscribe('m1', { onEvent: (_event, seq) => got.push(seq), onResync: () => resyncs++ });
    await until(
      () => FakeSocket.all.length,
      (count) => count === 1,
    );
    // Chromium's signs of a socket the page's CSP refuses: an error (no close) and the page's securitypolicyviolation.
    latest().onerror?.({});
    expect(live.state).toBe('reconnecting');
    page.dispatchEvent(Object.assign(new Event('securitypolicyviolation'), { blockedURI: 'ws://127.0.0.1:1/api/v2/live?ticket=t1' }));
    // Starts at the log's head (the listeners read the state), then follows it event by event, in order, once each.
    await until(
      () => live.state,
      (state) => state === 'live',
    );
    expect(resyncs).toBe(1);
    expect(got).toEqual([]);
    head = 5;
    await until(
      () => got,
      (seqs) => seqs.length === 3,
    );
    expect(got).toEqual([3, 4, 5]);
    expect(states).toEqual(['connecting', 'reconnecting', 'live']);
    const reads = () => calls.filter((call) => call.startsWith('GET /markups/m1/events'));
    expect(reads()[0]).toBe('GET /markups/m1/events?after=0&limit=100');
    // The next read (pollMs later) goes on from the last seq handed over.
    expect(await until(reads, (made) => made.includes('GET /markups/m1/events?after=5&limit=100'))).toContain(
      'GET /markups/m1/events?after=5&limit=100',
    );
    // Minutes later (socketRetryMs) the socket is tried again with a new ticket; once it opens it replays from the seq, and the log is no
    // longer read.
    await until(
      () => FakeSocket.all.length,
      (count) => count === 2,
    );
    expect(latest().url).toBe('ws://127.0.0.1:1/api/v2/live?ticket=t2');
    latest().open();
    expect(latest().sent).toEqual([{ type: 'subscribe', markupId: 'm1', after: 5 }]);
    latest().message({ type: 'subscribed', markupId: 'm1', seq: 5 });
    const readCount = reads().length;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(reads().length).toBeLessThanOrEqual(readCount + 1); // at most the round already under way
    latest().message({ type: 'event', markupId: 'm1', seq: 6, event: event(6) });
    expect(got).toEqual([3, 4, 5, 6]);
    expect(live.state).toBe('live');
    live.close();

    // A browser that throws on construction (Firefox's SecurityError) follows the log as well.
    class Refused {
      constructor() {
        throw new DOMException('The operation is insecure.', 'SecurityError');
      }
    }
    const other = new LiveClient(request, { WebSocket: Refused as unknown as SocketFactory, pollMs: 10, socketRetryMs: 60_000 });
    const seen: number[] = [];
    other.subscribe('m1', { onEvent: (_event, seq) => seen.push(seq) });
    await until(
      () => other.state,
      (state) => state === 'live',
    );
    head = 7;
    await until(
      () => seen,
      (seqs) => seqs.length === 2,
    );
    expect(seen).toEqual([6, 7]);
    other.close();
  });

  it('following the log: a failing read backs off and shows reconnecting, the next good one is live again; a refused markup is reported once', async () => {
    let failing = false;
    const { request: base, calls } = api({ log: () => 1 });
    const request = (async (path: string, init?: { method?: 'POST' }) => {
      if (path.startsWith('/markups/secret/')) throw Object.assign(new Error('You may not read this markup.'), { status: 403 });
      if (failing && path.includes('/events')) throw Object.assign(new Error('The service could not be reached.'), { status: 503 });
      return base(path, init);
    }) as Request;
    const { live, states } = client(request, { pollMs: 10, socketRetryMs: 60_000 });
    const refusals: number[] = [];
    live.subscribe('secret', { onEvent: () => undefined, onRefused: (status) => refusals.push(status) });
    live.subscribe('m1', () => undefined);
    await until(
      () => FakeSocket.all.length,
      (count) => count === 1,
    );
    page.dispatchEvent(Object.assign(new Event('securitypolicyviolation'), { blockedURI: 'ws://127.0.0.1:1/api/v2/live?ticket=t1' }));
    await until(
      () => live.state,
      (state) => state === 'live',
    );
    failing = true;
    await until(
      () => live.state,
      (state) => state === 'reconnecting',
    );
    failing = false;
    await until(
      () => live.state,
      (state) => state === 'live',
    );
    expect(states).toEqual(['connecting', 'live', 'reconnecting', 'live']);
    expect(refusals).toEqual([403]);
    expect(calls.filter((call) => call.startsWith('GET /markups/secret/'))).toHaveLength(0); // the test's request answers it before `api` records it
    expect(FakeSocket.all).toHaveLength(1); // the socket waits for socketRetryMs
    live.close();
  });

  it('backs off exponentially with jitter, capped', () => {
    expect([0, 1, 2, 3].map((attempt) => backoffDelay(attempt, 500, 30_000, () => 0))).toEqual([250, 500, 1000, 2000]);
    expect([0, 1, 2, 3].map((attempt) => backoffDelay(attempt, 500, 30_000, () => 1))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffDelay(40, 500, 30_000, () => 1)).toBe(30_000);
    expect(backoffDelay(40, 500, 30_000, () => 0)).toBe(15_000);
  });
});
