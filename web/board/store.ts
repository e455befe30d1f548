import type { BoardTransport } from './transport.js';
import type { Member, PageLayout, Placement, Thread } from './types.js';

/** What the store reads of a live event (web/live's LiveEvent): its type and the thread it is about. */
export interface ThreadEvent {
  type: string;
  data: { comment?: { id: string; resolved?: unknown; lastActivityAt?: unknown } | null };
}

/** Threads read one by one per burst of live events; more than this many read the whole list once instead. */
const LIVE_THREAD_BATCH = 8;
/** How long a burst of live events gathers before the threads they name are read. */
const LIVE_COALESCE_MS = 16;

export type ThreadFilter = 'all' | 'open' | 'resolved';
/** The list's order: by pin number, latest activity first, or where on the markup (page, image, media time). */
export type ThreadOrder = 'number' | 'activity' | 'position';

export interface BoardState {
  threads: Thread[];
  loaded: boolean;
  filter: ThreadFilter;
  order: ThreadOrder;
  /** Who can be mentioned, once asked for. */
  members?: Member[];
  /** "Add comment" mode: the next click on a surface places a pin. */
  adding: boolean;
  /** A placed pin waiting for its first message (the "New comment" dialog). */
  draft?: Placement;
  /** The thread whose dialog is open. */
  openThreadId?: string;
  /** The last failure, as the problem's detail. */
  error?: string;
}

/**
 * The board's one source of truth: pins and the thread list both render `threads` through
 * `visibleThreads`, so they cannot disagree. Every change goes through the API first and then
 * replaces the thread with what the API answers.
 */
export class BoardStore {
  private state: BoardState = { threads: [], loaded: false, filter: 'all', order: 'number', adding: false };
  private readonly listeners = new Set<() => void>();
  /** Live events' threads waiting to be read again, those being read, and whether the whole list is due. */
  private readonly staleThreads = new Set<string>();
  private readonly readingThreads = new Set<string>();
  private listStale = false;
  private flushTimer?: ReturnType<typeof setTimeout>;

  constructor(
    private readonly transport: BoardTransport,
    readonly markupId: string,
  ) {}

  get(): BoardState {
    return this.state;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(change: Partial<BoardState>): void {
    this.state = { ...this.state, ...change };
    for (const listener of this.listeners) listener();
  }

  private put(thread: Thread): void {
    const others = this.state.threads.filter((known) => known.id !== thread.id);
    this.set({ threads: [...others, thread].sort((a, b) => a.number - b.number) });
  }

  /** Runs an API call; a failure is kept as `error` (shown by the board) and answered as undefined. */
  private async attempt<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      const result = await work();
      if (this.state.error) this.set({ error: undefined });
      return result;
    } catch (failure) {
      this.set({ error: failure instanceof Error && failure.message ? failure.message : 'The request failed.' });
      return undefined;
    }
  }

  async load(): Promise<void> {
    const threads = await this.attempt(() => this.transport.listThreads(this.markupId));
    if (threads) this.set({ threads: [...threads].sort((a, b) => a.number - b.number), loaded: true });
  }

  /**
   * A live event of one of the markup's threads (web/live): a resolve or reopen of a known thread is
   * applied from the event at once; anything else reads that thread again (the event's copy has the
   * scopes and read state of the one who acted, not of this viewer). Bursts are gathered: each
   * thread is read once, and when many threads changed at once the list is read once instead.
   */
  applyEvent(event: ThreadEvent): void {
    const comment = event.data.comment;
    if (!comment?.id) {
      // Gone before the event was built: the list says what is left.
      this.listStale = true;
      return this.scheduleFlush();
    }
    const known = this.state.threads.find((thread) => thread.id === comment.id);
    if (known && (event.type === 'comment_resolved' || event.type === 'comment_unresolved') && typeof comment.resolved === 'boolean') {
      this.put({
        ...known,
        resolved: comment.resolved,
        ...(typeof comment.lastActivityAt === 'number' ? { lastActivityAt: comment.lastActivityAt } : {}),
      });
      // A read of the thread already under way may answer what it was before: it is read once more.
      if (this.readingThreads.has(comment.id)) this.staleThreads.add(comment.id);
      return;
    }
    this.staleThreads.add(comment.id);
    this.scheduleFlush();
  }

  /** Reads the thread list again without reporting a failure (the next event or reload tries again). */
  reloadQuietly(): void {
    void this.transport.listThreads(this.markupId).then(
      (threads) => this.set({ threads: [...threads].sort((a, b) => a.number - b.number), loaded: true }),
      () => undefined,
    );
  }

  private scheduleFlush(): void {
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, LIVE_COALESCE_MS);
  }

  private flush(): void {
    const due = [...this.staleThreads].filter((id) => !this.readingThreads.has(id));
    if (this.listStale || due.length > LIVE_THREAD_BATCH) {
      this.listStale = false;
      for (const id of due) this.staleThreads.delete(id);
      return this.reloadQuietly();
    }
    for (const id of due) {
      this.staleThreads.delete(id);
      this.readingThreads.add(id);
      void this.transport
        .getThread(id)
        .then(
          (thread) => {
            this.put(thread);
            // Read in front of the viewer: it is not unread for them.
            if (thread.id === this.state.openThreadId) this.open(thread.id);
          },
          (failure: unknown) => {
            if ((failure as { status?: unknown } | undefined)?.status !== 404) return;
            this.set({
              threads: this.state.threads.filter((thread) => thread.id !== id),
              openThreadId: this.state.openThreadId === id ? undefined : this.state.openThreadId,
            });
          },
        )
        .finally(() => {
          this.readingThreads.delete(id);
          if (this.staleThreads.has(id)) this.scheduleFlush();
        });
    }
  }

  async refreshThread(threadId: string): Promise<void> {
    const thread = await this.attempt(() => this.transport.getThread(threadId));
    if (thread) this.put(thread);
  }

  /** A webpage markup's screenshot layout at one view mode (where its elements are); a failure throws with the problem's detail. */
  pageLayout(viewModeId: string): Promise<PageLayout> {
    return this.transport.pageLayout(this.markupId, viewModeId);
  }

  setFilter(filter: ThreadFilter): void {
    this.set({ filter });
  }

  setOrder(order: ThreadOrder): void {
    this.set({ order });
  }

  /** Whether this caller can mention people: members list who can be mentioned, end users cannot (the route is closed to them). */
  get canMention(): boolean {
    return this.transport.taggable !== undefined;
  }

  /** Loads who can be mentioned (once); an error leaves the list empty. */
  async loadMembers(): Promise<void> {
    const taggable = this.transport.taggable;
    if (this.state.members || !taggable) return;
    const members = await this.attempt(() => taggable(this.markupId));
    this.set({ members: members ?? [] });
  }

  setAdding(adding: boolean): void {
    this.set({ adding, draft: adding ? this.state.draft : undefined });
  }

  place(placement: Placement): void {
    this.set({ adding: false, draft: placement });
  }

  cancelDraft(): void {
    this.set({ draft: undefined });
  }

  dismissError(): void {
    this.set({ error: undefined });
  }

  /** Posts the draft as a new thread; answers it, or undefined when the API refused (error set). */
  async post(content: string, mentionIds: string[] = []): Promise<Thread | undefined> {
    const draft = this.state.draft;
    if (!draft) return undefined;
    const thread = await this.attempt(() => this.transport.createImageThread(this.markupId, draft, content, mentionIds));
    if (!thread) return undefined;
    this.put(thread);
    this.set({ draft: undefined });
    return thread;
  }

  open(threadId: string | undefined): void {
    this.set({ openThreadId: threadId });
    const thread = this.state.threads.find((known) => known.id === threadId);
    // Opening a thread reads it: the unread marker clears here and on the API.
    if (thread && (thread.read === false || (thread.unreadMessageCount ?? 0) > 0)) {
      this.put({ ...thread, read: true, unreadMessageCount: 0 });
      void this.attempt(() => this.transport.markRead(thread.id));
    }
  }

  async reply(threadId: string, content: string, mentionIds: string[] = [], attachmentIds: string[] = []): Promise<boolean> {
    const message = await this.attempt(() => this.transport.reply(threadId, content, mentionIds, attachmentIds));
    if (!message) return false;
    await this.refreshThread(threadId);
    return true;
  }

  /** Uploads a file to attach to a message of this markup; answers its file id, or undefined when refused (error set). */
  uploadAttachment(file: File, onProgress: (fraction: number) => void): Promise<string | undefined> {
    return this.attempt(() => this.transport.uploadAttachment(this.markupId, file, onProgress));
  }

  async setResolved(threadId: string, resolved: boolean): Promise<void> {
    const done = await this.attempt(() => (resolved ? this.transport.resolve(threadId) : this.transport.reopen(threadId)).then(() => true));
    const thread = this.state.threads.find((known) => known.id === threadId);
    if (done && thread) this.put({ ...thread, resolved });
  }

  async editMessage(threadId: string, messageId: string, content: string): Promise<boolean> {
    const done = await this.attempt(() => this.transport.editMessage(messageId, content).then(() => true));
    if (done) await this.refreshThread(threadId);
    return Boolean(done);
  }

  /** Deletes a whole thread (its writer's or an admin's right); its pin and list entry go with it. */
  async deleteThread(threadId: string): Promise<boolean> {
    const done = await this.attempt(() => this.transport.deleteThread(threadId).then(() => true));
    if (done) this.set({ threads: this.state.threads.filter((thread) => thread.id !== threadId), openThreadId: undefined });
    return Boolean(done);
  }

  async deleteMessage(threadId: string, messageId: string): Promise<boolean> {
    const done = await this.attempt(() => this.transport.deleteMessage(messageId).then(() => true));
    if (done) await this.refreshThread(threadId);
    return Boolean(done);
  }
}
