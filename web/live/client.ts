import type { Request } from '../board/transport.js';

/**
 * Live updates in the browser (DESIGN.md "Live updates"), shared by the review app and the
 * embeddable client: one WebSocket per client, opened with a single-use ticket from
 * `POST /live/tickets`, subscriptions per markup, every markup's events handed over exactly once
 * and in `seq` order. A socket that closes is opened again with a NEW ticket after a capped,
 * jittered exponential backoff, and every subscription is sent again with `after` = the last seq
 * it handed over: the server replays what came since. What it has not replayed within a short
 * grace (a `subscribed` seq ahead of the last one handed over, or an event after a gap) is read
 * from `GET /markups/{id}/events?after=SEQ`, so nothing is missed, and nothing is handed over
 * twice whichever of the two brings it. A socket that cannot even be opened (a customer page's CSP
 * names the app's https origin, which does not cover the socket's wss one) is not waited for: each
 * markup's event log is followed instead, every second while the page is visible, and the socket is
 * tried again every few minutes. No globals.
 */

/** The webhook body an event message carries (DESIGN.md "Webhook deliveries"). */
export interface LiveEvent {
  id: string;
  type: string;
  workspaceId: string;
  createdAt: string;
  data: {
    markup?: Record<string, unknown> | null;
    user?: Record<string, unknown> | null;
    comment?: ({ id: string } & Record<string, unknown>) | null;
    message?: ({ id: string } & Record<string, unknown>) | null;
  };
}

/**
 * `connecting`: the first socket is being opened; `live`: subscribed and caught up; `reconnecting`:
 * the socket closed (or never opened) and is being opened again; `closed`: nothing is subscribed.
 */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface Subscription {
  /** Each event of the markup once, in seq order. */
  onEvent: (event: LiveEvent, seq: number) => void;
  /**
   * The subscription started where the caller's own read cannot be continued event by event (the
   * first `subscribed`, or a gap the event log could not fill): read the state again. Events from
   * then on are handed over.
   */
  onResync?: () => void;
  /** The server refused the subscription (`{ type: "error", status, detail }`); it is not sent again. */
  onRefused?: (status: number, detail: string) => void;
}

/** A WebSocket constructor (the browser's; tests and the bench pass another with the same surface). */
export type SocketFactory = new (url: string) => {
  readonly readyState: number;
  send(data: string): void;
  close(): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: unknown) => void) | null;
  onerror: ((event: unknown) => void) | null;
};

export interface LiveOptions {
  /** Default: the global `WebSocket`. */
  WebSocket?: SocketFactory;
  /** The first retry's delay (default 500 ms); each next one doubles, up to `maxDelayMs` (default 30 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A socket not open after this long is given up and opened again (default 10 s). */
  openTimeoutMs?: number;
  /** How long the server's replay has to close a gap before the event log is read (default 2 s). */
  catchUpGraceMs?: number;
  /** Default Math.random (the jitter). */
  random?: () => number;
  /** Without a socket, the event log is read every `pollMs` (default 1 s), `hiddenPollMs` while the page is hidden (default 10 s). */
  pollMs?: number;
  hiddenPollMs?: number;
  /** Meanwhile the socket is tried again every `socketRetryMs` (default 3 min). */
  socketRetryMs?: number;
}

interface Entry {
  markupId: string;
  listeners: Set<Subscription>;
  /** The last seq handed over; undefined until the first `subscribed`. */
  seq?: number;
  /** Events that came ahead of a gap, by seq. */
  ahead: Map<number, LiveEvent>;
  /** The seq the subscription must reach to be caught up (the last `subscribed` seq, or an event's after a gap). */
  target?: number;
  /** A fill from the event log is running, or waiting out the grace. */
  filling: boolean;
  grace?: ReturnType<typeof setTimeout>;
  refused: boolean;
}

interface Ticket {
  url: string;
  expiresAt: string;
}

interface EventsPage {
  data: { seq: number; event: LiveEvent }[];
  hasMore: boolean;
  nextCursor?: string | null;
}

const OPEN = 1;

/** The window's events where there is a window (not in Node, where the bench runs this client). */
const windowEvents = () => {
  const scope = globalThis as { addEventListener?: unknown; removeEventListener?: unknown };
  return typeof scope.addEventListener === 'function'
    ? (scope as unknown as Pick<EventTarget, 'addEventListener' | 'removeEventListener'>)
    : undefined;
};
/** Events read from the log per page. */
const FILL_PAGE = 100;

/** The delay before retry `attempt` (0-based): half fixed, half random ("equal jitter"), capped. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

export class LiveClient {
  private readonly entries = new Map<string, Entry>();
  private readonly stateListeners = new Set<(state: LiveState) => void>();
  private socket?: InstanceType<SocketFactory>;
  private current: LiveState = 'closed';
  private attempt = 0;
  private timer?: ReturnType<typeof setTimeout>;
  private openTimer?: ReturnType<typeof setTimeout>;
  /** Bumped on every new socket: callbacks of an old one do nothing. */
  private generation = 0;
  /** Non-zero while the event log is followed instead of a socket (the run's number). */
  private polling = 0;
  private runs = 0;
  private pollTimer?: ReturnType<typeof setTimeout>;
  private pollFailures = 0;
  private readonly options: Required<Omit<LiveOptions, 'WebSocket'>> & { WebSocket?: SocketFactory };

  constructor(
    /** The caller's API request function (the app's session, the embed's exchange token). */
    private readonly request: Request,
    options: LiveOptions = {},
  ) {
    this.options = {
      baseDelayMs: 500,
      maxDelayMs: 30_000,
      openTimeoutMs: 10_000,
      catchUpGraceMs: 2_000,
      random: Math.random,
      pollMs: 1_000,
      hiddenPollMs: 10_000,
      socketRetryMs: 180_000,
      ...options,
    };
  }

  get state(): LiveState {
    return this.current;
  }

  /** Calls `listener` on every change of `state`; answers the function that stops it. */
  onState(listener: (state: LiveState) => void): () => void {
    this.stateListeners.add(listener);
    return () => void this.stateListeners.delete(listener);
  }

  /** Follows `markupId`'s events; answers the function that stops following. */
  subscribe(markupId: string, subscription: Subscription | Subscription['onEvent']): () => void {
    const listener = typeof subscription === 'function' ? { onEvent: subscription } : subscription;
    let entry = this.entries.get(markupId);
    if (!entry) {
      entry = { markupId, listeners: new Set(), ahead: new Map(), filling: false, refused: false };
      this.entries.set(markupId, entry);
      if (this.socket?.readyState === OPEN) this.sendSubscribe(entry);
    } else if (entry.seq !== undefined) {
      // A second listener starts from now, like a first subscription.
      queueMicrotask(() => listener.onResync?.());
    }
    entry.listeners.add(listener);
    if (this.current === 'closed') this.connect();
    return () => {
      const known = this.entries.get(markupId);
      if (!known?.listeners.delete(listener) || known.listeners.size > 0) return;
      clearTimeout(known.grace);
      this.entries.delete(markupId);
      // The server keeps sending until the socket closes: with nothing left, it closes.
      if (this.entries.size === 0) this.stop();
    };
  }

  /** Closes the socket and forgets every subscription. */
  close(): void {
    for (const entry of this.entries.values()) clearTimeout(entry.grace);
    this.entries.clear();
    this.stop();
  }

  /** Opens a socket now instead of waiting out the backoff (the browser says it is online again). */
  retryNow(): void {
    if (this.current !== 'reconnecting' || this.socket) return;
    clearTimeout(this.timer);
    this.attempt = 0;
    void this.open();
  }

  private stop(): void {
    this.generation++;
    clearTimeout(this.timer);
    clearTimeout(this.openTimer);
    clearTimeout(this.pollTimer);
    this.polling = 0;
    const socket = this.socket;
    this.socket = undefined;
    this.attempt = 0;
    windowEvents()?.removeEventListener('online', this.online);
    windowEvents()?.removeEventListener('securitypolicyviolation', this.violation);
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
      socket.close();
    }
    this.setState('closed');
  }

  private setState(state: LiveState): void {
    if (state === this.current) return;
    this.current = state;
    for (const listener of [...this.stateListeners]) listener(state);
  }

  private connect(): void {
    this.setState('connecting');
    // Back online: no need to wait out the backoff (browsers only; the bench runs this in Node).
    windowEvents()?.addEventListener('online', this.online);
    windowEvents()?.addEventListener('securitypolicyviolation', this.violation);
    void this.open();
  }

  private readonly online = () => this.retryNow();

  /** The page's CSP refused a socket (it names the app's http(s) origin, not the ws(s) one): follow the log. */
  private readonly violation = (event: Event) => {
    if (/^wss?:/i.test((event as { blockedURI?: string }).blockedURI ?? '') && this.socket?.readyState !== OPEN && this.entries.size)
      this.dropped(true);
  };

  /** Asks for a ticket and opens a socket with it; any failure schedules the next attempt. */
  private async open(): Promise<void> {
    const generation = ++this.generation;
    let ticket: Ticket;
    try {
      ticket = await this.request<Ticket>('/live/tickets', { method: 'POST' });
      if (!/^wss?:\/\//i.test(ticket?.url ?? '')) throw new Error('The ticket is not a WebSocket URL.');
    } catch {
      if (generation === this.generation) this.retryLater();
      return;
    }
    if (generation !== this.generation || this.entries.size === 0) return;
    const Socket = this.options.WebSocket ?? ((globalThis as { WebSocket?: unknown }).WebSocket as SocketFactory);
    let socket: InstanceType<SocketFactory>;
    try {
      socket = new Socket(ticket.url);
    } catch {
      // A SecurityError: the page's CSP refuses the socket.
      return this.follow();
    }
    this.socket = socket;
    let opened = false;
    this.openTimer = setTimeout(() => generation === this.generation && this.dropped(), this.options.openTimeoutMs);
    socket.onopen = () => {
      if (generation !== this.generation) return;
      opened = true;
      clearTimeout(this.openTimer);
      // The socket is back: it replays from each subscription's seq, the log is no longer read.
      clearTimeout(this.pollTimer);
      this.polling = 0;
      for (const entry of this.entries.values()) if (!entry.refused) this.sendSubscribe(entry);
    };
    socket.onmessage = (message) => generation === this.generation && this.receive(message.data);
    socket.onclose = () => generation === this.generation && this.dropped();
    // Chromium answers a CSP refusal with an error (and the page's `securitypolicyviolation`), no close.
    socket.onerror = () => generation === this.generation && !opened && this.dropped();
  }

  private dropped(refused = false): void {
    clearTimeout(this.openTimer);
    const socket = this.socket;
    this.socket = undefined;
    this.generation++;
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
      if (socket.readyState <= OPEN) socket.close();
    }
    for (const entry of this.entries.values()) {
      entry.ahead.clear();
      entry.target = undefined;
    }
    if (this.entries.size === 0) return this.setState('closed');
    if (refused) return this.follow();
    this.retryLater();
  }

  private retryLater(): void {
    if (this.polling) return this.follow();
    this.socket = undefined;
    this.setState('reconnecting');
    clearTimeout(this.timer);
    const delay = backoffDelay(this.attempt++, this.options.baseDelayMs, this.options.maxDelayMs, this.options.random);
    this.timer = setTimeout(() => void this.open(), delay);
  }

  private sendSubscribe(entry: Entry): void {
    this.socket?.send(
      JSON.stringify({ type: 'subscribe', markupId: entry.markupId, ...(entry.seq !== undefined ? { after: entry.seq } : {}) }),
    );
  }

  private receive(data: unknown): void {
    let message: { type?: unknown; markupId?: unknown; seq?: unknown; event?: unknown; status?: unknown; detail?: unknown };
    try {
      message = JSON.parse(typeof data === 'string' ? data : String(data)) as typeof message;
    } catch {
      return;
    }
    const entry = typeof message.markupId === 'string' ? this.entries.get(message.markupId) : undefined;
    if (!entry) return;
    const seq = typeof message.seq === 'number' && Number.isInteger(message.seq) && message.seq >= 0 ? message.seq : undefined;
    if (message.type === 'subscribed' && seq !== undefined) return this.subscribed(entry, seq);
    if (message.type === 'event' && seq !== undefined && message.event && typeof message.event === 'object')
      return this.arrived(entry, seq, message.event as LiveEvent);
    if (message.type === 'error') {
      const status = typeof message.status === 'number' ? message.status : 0;
      const detail = typeof message.detail === 'string' ? message.detail : 'The subscription was refused.';
      // A refusal that may pass later (throttled, a server error) is tried again with the next socket.
      if (status !== 429 && status < 500) entry.refused = true;
      for (const listener of [...entry.listeners]) listener.onRefused?.(status, detail);
      this.settle();
    }
  }

  private subscribed(entry: Entry, seq: number): void {
    this.attempt = 0;
    if (entry.seq === undefined) {
      entry.seq = seq;
      for (const listener of [...entry.listeners]) listener.onResync?.();
    } else if (seq > entry.seq) {
      // Missed while away: the server replays them after `after`; the log fills what it has not by the grace.
      this.awaitCatchUp(entry, seq);
    }
    this.settle();
  }

  private arrived(entry: Entry, seq: number, event: LiveEvent): void {
    if (entry.seq === undefined || seq <= entry.seq) return;
    if (seq === entry.seq + 1) {
      this.deliver(entry, seq, event);
      this.drain(entry);
      if (entry.target !== undefined && entry.seq >= entry.target) this.settle();
      return;
    }
    entry.ahead.set(seq, event);
    this.awaitCatchUp(entry, seq - 1);
  }

  /** Caught up once `through` is handed over: the socket has the grace to bring it, then the log is read. */
  private awaitCatchUp(entry: Entry, through: number): void {
    entry.target = Math.max(entry.target ?? 0, through);
    if (entry.filling) return;
    entry.filling = true;
    entry.grace = setTimeout(() => {
      entry.filling = false;
      if (this.entries.get(entry.markupId) === entry && entry.seq !== undefined && entry.target !== undefined && entry.seq < entry.target)
        void this.fill(entry, entry.target);
      else this.settle();
    }, this.options.catchUpGraceMs);
  }

  private deliver(entry: Entry, seq: number, event: LiveEvent): void {
    entry.seq = seq;
    entry.ahead.delete(seq);
    for (const listener of [...entry.listeners]) {
      try {
        listener.onEvent(event, seq);
      } catch {
        // One listener's failure neither stops the others nor the stream.
      }
    }
  }

  /** Hands over buffered events that now follow on. */
  private drain(entry: Entry): void {
    for (let next = entry.ahead.get(entry.seq! + 1); next; next = entry.ahead.get(entry.seq! + 1))
      this.deliver(entry, entry.seq! + 1, next);
    if (entry.ahead.size) for (const seq of [...entry.ahead.keys()]) if (seq <= entry.seq!) entry.ahead.delete(seq);
  }

  /** Reads the log after the last handed-over seq until `through` is reached (or the log ends). */
  private async fill(entry: Entry, through: number): Promise<void> {
    if (entry.filling) return;
    entry.filling = true;
    try {
      while (entry.seq !== undefined && entry.seq < through && this.entries.get(entry.markupId) === entry) {
        const before = entry.seq;
        const page = await this.request<EventsPage>(
          `/markups/${encodeURIComponent(entry.markupId)}/events?after=${entry.seq}&limit=${FILL_PAGE}`,
        );
        for (const item of page.data) if (item.seq === entry.seq + 1) this.deliver(entry, item.seq, item.event);
        this.drain(entry);
        // A page that does not continue the seqs (the log expired under it) ends the fill: the rest is a resync.
        if (!page.hasMore || entry.seq === before) break;
      }
    } catch {
      // The log cannot be read (expired, refused): start over from the state as it is now.
      const latest = Math.max(through, ...entry.ahead.keys());
      entry.ahead.clear();
      entry.seq = latest;
      for (const listener of [...entry.listeners]) listener.onResync?.();
    } finally {
      entry.filling = false;
      if (entry.seq !== undefined && entry.seq < through) {
        // The log ended before `through` (it cannot: the seq is written with the event): start over.
        const latest = Math.max(through, ...entry.ahead.keys());
        entry.ahead.clear();
        entry.seq = latest;
        for (const listener of [...entry.listeners]) listener.onResync?.();
      }
      if (entry.target !== undefined && entry.seq !== undefined && entry.seq >= entry.target) entry.target = undefined;
      // A later target (a reconnect while this ran) gets its own grace.
      if (entry.target !== undefined && this.entries.get(entry.markupId) === entry) this.awaitCatchUp(entry, entry.target);
      this.settle();
    }
  }

  /** Follows each markup's event log from now on, and tries the socket again in `socketRetryMs`. */
  private follow(): void {
    this.socket = undefined;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.open(), this.options.socketRetryMs);
    if (this.polling) return;
    this.polling = ++this.runs;
    this.pollFailures = 0;
    void this.poll(this.polling);
  }

  /**
   * One round: every subscription's events after its seq, handed over in order; a subscription
   * without a seq yet (or whose log has a gap) starts at the log's head and its listeners start over.
   */
  private async poll(run: number): Promise<void> {
    let failed = false;
    for (const entry of [...this.entries.values()]) {
      if (this.polling !== run) return;
      if (entry.refused || entry.filling || this.entries.get(entry.markupId) !== entry) continue;
      entry.filling = true;
      try {
        let resync = entry.seq === undefined;
        let after = entry.seq ?? 0;
        for (;;) {
          const page = await this.request<EventsPage>(
            `/markups/${encodeURIComponent(entry.markupId)}/events?after=${after}&limit=${FILL_PAGE}`,
          );
          if (!resync) for (const item of page.data) if (item.seq === entry.seq! + 1) this.deliver(entry, item.seq, item.event);
          const last = page.data.at(-1)?.seq ?? after;
          // Entries that do not follow on (the log expired under it): start over at the head.
          resync ||= entry.seq! < last;
          after = resync ? Math.max(after, last) : entry.seq!;
          if (!page.hasMore || !page.data.length) break;
        }
        if (resync) {
          entry.seq = after;
          entry.ahead.clear();
          for (const listener of [...entry.listeners]) listener.onResync?.();
        }
      } catch (error) {
        const status = (error as { status?: unknown }).status;
        // Refused like a subscription (no read right, no such markup): reported, not read again.
        if (status === 403 || status === 404) {
          entry.refused = true;
          for (const listener of [...entry.listeners]) listener.onRefused?.(status, (error as Error).message);
        } else failed = true;
      } finally {
        entry.filling = false;
      }
    }
    if (this.polling !== run) return;
    this.pollFailures = failed ? this.pollFailures + 1 : 0;
    this.setState(failed ? 'reconnecting' : 'live');
    const hidden = (globalThis as { document?: { hidden?: boolean } }).document?.hidden;
    const { pollMs, hiddenPollMs, maxDelayMs, random } = this.options;
    this.pollTimer = setTimeout(
      () => void this.poll(run),
      failed ? backoffDelay(this.pollFailures, pollMs, maxDelayMs, random) : hidden ? hiddenPollMs : pollMs,
    );
  }

  /** Live once the socket is open and every subscription has its seq and no fill running. */
  private settle(): void {
    if (this.socket?.readyState !== OPEN) return;
    const waiting = [...this.entries.values()].some(
      (entry) => !entry.refused && (entry.seq === undefined || (entry.target !== undefined && entry.seq < entry.target)),
    );
    if (!waiting) this.setState('live');
  }
}
