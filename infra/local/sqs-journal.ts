import { closeSync, existsSync, fdatasync, fsyncSync, openSync, readFileSync, renameSync, write, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** What a queue keeps of a message: the fields local-aws-sqs's `setRecord` takes back. */
export interface JournalMessage {
  MessageBody: string;
  MessageAttributes?: unknown;
  MessageSystemAttributes?: unknown;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
}

/** A message a queue holds: where, since when receivable, until when kept, how often received. */
export interface LiveMessage {
  queue: string;
  message: JournalMessage;
  /** Epoch ms from which it is receivable (its DelaySeconds' end). */
  visibleAt: number;
  /** Epoch ms at which the queue's retention period drops it. */
  expiresAt: number;
  receiveCount: number;
}

type Entry =
  | { op: 'put'; id: string; q: string; m: JournalMessage; at: number; exp: number; n?: number }
  | { op: 'recv'; id: string; n: number }
  | { op: 'del'; id: string }
  | { op: 'clear'; q: string };

/** A journal this many entries long, and four times longer than what it describes, is rewritten. */
const COMPACT_AFTER_ENTRIES = 10_000;

/**
 * The local queues' messages on disk: an append-only file of JSON lines (a message put on a queue,
 * received, deleted; a queue cleared), rewritten as just the live messages at each start and when
 * it grows. Entries are written and fdatasync'd in groups as soon as they are appended (no timer,
 * no polling); `durable()` answers when every entry appended so far is on disk, so the emulator
 * answers a request only after what it changed is kept. A torn last line (a kill mid-write) is
 * ignored: its request was never answered.
 */
export class QueueJournal {
  readonly #file: string;
  readonly #live = new Map<string, LiveMessage>();
  readonly #onError: (error: unknown) => void;
  #fd: number;
  #pending: string[] = [];
  /** The flush that will take what is pending when it starts (after the one in flight). */
  #queued: Promise<void> | undefined;
  /** The flush writing now. */
  #inFlight: Promise<void> | undefined;
  #tail: Promise<void> = Promise.resolve();
  #entriesSinceCompaction = 0;
  #closed = false;

  constructor(file: string, onError: (error: unknown) => void = () => undefined) {
    this.#file = file;
    this.#onError = onError;
    if (existsSync(file)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (line.trim() === '') continue;
        let entry: Entry;
        try {
          entry = JSON.parse(line) as Entry;
        } catch {
          continue;
        }
        this.#apply(entry);
      }
    }
    this.#rewrite(this.#snapshot());
    this.#fd = openSync(file, 'a');
  }

  /** The messages the journal holds, in the order they were put. */
  live(): ReadonlyMap<string, LiveMessage> {
    return this.#live;
  }

  put(id: string, queue: string, message: JournalMessage, visibleAt: number, expiresAt: number): void {
    this.#append({ op: 'put', id, q: queue, m: message, at: visibleAt, exp: expiresAt });
  }

  received(id: string, receiveCount: number): void {
    if (this.#live.has(id)) this.#append({ op: 'recv', id, n: receiveCount });
  }

  deleted(id: string): void {
    if (this.#live.has(id)) this.#append({ op: 'del', id });
  }

  cleared(queue: string): void {
    this.#append({ op: 'clear', q: queue });
  }

  /** Resolves once every entry appended so far is on disk; undefined when it already is. */
  durable(): Promise<void> | undefined {
    return this.#pending.length > 0 ? this.#queued : this.#inFlight;
  }

  async close(): Promise<void> {
    await this.durable();
    this.#closed = true;
    closeSync(this.#fd);
  }

  #append(entry: Entry): void {
    if (this.#closed) return;
    this.#apply(entry);
    this.#pending.push(`${JSON.stringify(entry)}\n`);
    this.#entriesSinceCompaction += 1;
    this.#queued ??= this.#tail.then(() => this.#flush());
    this.#tail = this.#queued;
  }

  async #flush(): Promise<void> {
    this.#queued = undefined;
    const compact = this.#entriesSinceCompaction > COMPACT_AFTER_ENTRIES && this.#entriesSinceCompaction > 4 * this.#live.size;
    // A compaction writes the live messages, which already include everything pending.
    const lines = compact ? this.#snapshot() : this.#pending.join('');
    this.#pending = [];
    const written = compact ? this.#compact(lines) : this.#write(lines);
    this.#inFlight = written.catch(this.#onError);
    await this.#inFlight;
    if (this.#pending.length === 0) this.#inFlight = undefined;
  }

  async #write(text: string): Promise<void> {
    const fd = this.#fd;
    const buffer = Buffer.from(text);
    let offset = 0;
    while (offset < buffer.length) {
      offset += await new Promise<number>((resolve, reject) =>
        write(fd, buffer, offset, buffer.length - offset, null, (error, bytes) => (error ? reject(error) : resolve(bytes))),
      );
    }
    await new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
  }

  async #compact(snapshot: string): Promise<void> {
    this.#entriesSinceCompaction = 0;
    closeSync(this.#fd);
    this.#rewrite(snapshot);
    this.#fd = openSync(this.#file, 'a');
  }

  /** Replaces the file with `text`, on disk before the rename, and the rename on disk too. */
  #rewrite(text: string): void {
    const temporary = `${this.#file}.tmp`;
    writeFileSync(temporary, text);
    const fd = openSync(temporary, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temporary, this.#file);
    const directory = openSync(dirname(this.#file), 'r');
    fsyncSync(directory);
    closeSync(directory);
  }

  #snapshot(): string {
    const now = Date.now();
    let text = '';
    for (const [id, live] of this.#live) {
      if (live.expiresAt <= now) {
        this.#live.delete(id);
        continue;
      }
      const entry: Entry = {
        op: 'put',
        id,
        q: live.queue,
        m: live.message,
        at: live.visibleAt,
        exp: live.expiresAt,
        ...(live.receiveCount > 0 ? { n: live.receiveCount } : {}),
      };
      text += `${JSON.stringify(entry)}\n`;
    }
    return text;
  }

  #apply(entry: Entry): void {
    switch (entry.op) {
      case 'put': {
        // A message moved to another queue (a dead-letter queue) keeps its id: it moves here too.
        const before = this.#live.get(entry.id);
        const live = { queue: entry.q, message: entry.m, visibleAt: entry.at, expiresAt: entry.exp, receiveCount: entry.n ?? 0 };
        if (before) Object.assign(before, live);
        else this.#live.set(entry.id, live);
        break;
      }
      case 'recv': {
        const live = this.#live.get(entry.id);
        if (live) live.receiveCount = entry.n;
        break;
      }
      case 'del':
        this.#live.delete(entry.id);
        break;
      case 'clear':
        for (const [id, live] of this.#live) if (live.queue === entry.q) this.#live.delete(id);
        break;
    }
  }
}
