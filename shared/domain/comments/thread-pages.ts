import type { Principal } from '../../auth/principal.js';
import type { MarkupRecord } from '../../db/items.js';
import { getMessageReference } from '../../db/messages.js';
import { getReadMarksOf, getReadMarksOfPage, type ReadMark } from '../../db/read-marks.js';
import {
  countBefore,
  leafFilter,
  positionIn,
  readIndexRange,
  foldsReadMarks,
  keepsPageCopies,
  readPageCopies,
  sortableNumber,
  threadNumberAt,
  type IndexEntry,
  type IndexKind,
  type ThreadIndexState,
} from '../../db/thread-index.js';
import { getMessagesOf, getThreadRecord, getThreadRecords, getThreadReference, type ThreadRecord } from '../../db/threads.js';
import type { MessageRecord } from '../../db/messages.js';
import { getUsers } from '../../db/users.js';
import { decodeCursor, encodeCursor } from '../../db/core/cursor.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import type { MarkupRoleAccess } from '../markups/access.js';
import type { ThreadPageView } from '../../schemas/threads.js';
import { indexReadMarks, readStateOf } from './read-state.js';
import { viewModeIdsOf, type ThreadOrder } from './thread-selection.js';
import type { ListThreadsInput } from './read-threads.js';
import { toPublicThread, viewerFor, type AuthorsRead } from './views.js';

/**
 * GET /threads on a markup in the indexed layout (`shared/db/thread-index.ts`). The default page (pin
 * order, no filter, no offset) of a layout 4 markup is one GetItem of the counters, one Query of
 * `limit + 1` page copies from the cursor, then side by side the caller's marks on them and a
 * BatchGet of the authors (`pageFromCopies`). Any other page costs one
 * GetItem of the counters, one Query of at most `offset + limit + 1` keys per selected leaf (at
 * most 8), then side by side one BatchGet of the page's threads (each with its copy of its
 * messages; 100 keys a request) and the caller's read marks on them (one Query of their range for
 * threads created one after another, as a page in pin order holds, else one key a thread:
 * `getReadMarksOfPage`), then a BatchGet of the authors, whatever the markup's size. `offset` reads `offset` more keys per
 * leaf; `withThreadOrMessageId` counts the keys before the thread (COUNT Queries, 1 MB of keys
 * each) and then reads the page at that offset. `q` reads threads in the order asked for, at most
 * `SEARCH_THREAD_BUDGET` of them a request, and answers with a cursor that resumes the scan.
 */

/** Threads a `q` search examines per request before it answers with what it found. */
export const SEARCH_THREAD_BUDGET = 500;
const SEARCH_BATCH = 50;

/** Which index serves each order, and in which direction it is read. */
export const ORDER_PLANS: Record<ThreadOrder, { kind: IndexKind; backward: boolean }> = {
  page: { kind: 'page', backward: false },
  pin_asc: { kind: 'pin', backward: false },
  pin_desc: { kind: 'pin', backward: true },
  activity: { kind: 'act', backward: true },
  timestamp: { kind: 'time', backward: false },
  priority_asc: { kind: 'prio', backward: false },
  priority_desc: { kind: 'prioDesc', backward: false },
};

/** The k-way merge of the selected leaves' Queries, in the order asked for, from a position. */
class Merge {
  private readonly leaves: { leaf: string; buffer: IndexEntry[]; more: boolean; after?: string }[];

  constructor(
    private readonly markupId: string,
    private readonly plan: { kind: IndexKind; backward: boolean },
    leaves: readonly string[],
    after: string | undefined,
  ) {
    this.leaves = leaves.map((leaf) => ({ leaf, buffer: [], more: true, after }));
  }

  exhausted = false;

  /** The next `n` entries (fewer at the end); a leaf is read again only when its entries ran out. */
  async take(n: number, chunk = n): Promise<IndexEntry[]> {
    const taken: IndexEntry[] = [];
    while (taken.length < n) {
      await Promise.all(
        this.leaves
          .filter((leaf) => leaf.buffer.length === 0 && leaf.more)
          .map(async (leaf) => {
            const range = await readIndexRange(this.markupId, this.plan.kind, leaf.leaf, {
              limit: chunk,
              backward: this.plan.backward,
              after: leaf.after,
            });
            leaf.buffer = range.entries;
            leaf.more = range.more;
            leaf.after = range.entries.at(-1)?.position ?? leaf.after;
          }),
      );
      let best: (typeof this.leaves)[number] | undefined;
      for (const leaf of this.leaves) {
        const head = leaf.buffer[0];
        if (!head) continue;
        const bestHead = best?.buffer[0];
        if (!bestHead || (this.plan.backward ? head.position > bestHead.position : head.position < bestHead.position)) best = leaf;
      }
      if (!best) {
        this.exhausted = true;
        break;
      }
      taken.push(best.buffer.shift()!);
    }
    return taken;
  }
}

function selectedLeaves(state: ThreadIndexState, input: ListThreadsInput): string[] {
  const viewModes = input.viewMode === undefined ? undefined : viewModeIdsOf(input.viewMode);
  return [...state.counts.keys()].filter((leaf) => {
    const { resolved, viewModeId } = leafFilter(leaf);
    if (input.resolved !== undefined && resolved !== input.resolved) return false;
    return !viewModes || (viewModeId !== undefined && viewModes.has(viewModeId));
  });
}

function decodePosition(key: Buffer, list: string, cursorId: string): string {
  const position = decodeCursor(key, list, cursorId, 'cursorId').k;
  if (typeof position !== 'string' || !/^[0-9a-f]{16,33}$/.test(position))
    throw new BadRequestError('cursorId is not a valid cursor for this list.', 'invalid-cursor');
  return position;
}

/** The page of an indexed markup; `list` binds cursors to this markup, order and filter. */
export async function listIndexedThreads(
  principal: Principal,
  access: MarkupRoleAccess,
  input: ListThreadsInput,
  context: { state: ThreadIndexState; key: Buffer; list: string },
): Promise<ThreadPageView> {
  const { markup } = access;
  const plan = ORDER_PLANS[input.order];
  const leaves = selectedLeaves(context.state, input);
  const after = input.cursorId === undefined ? undefined : decodePosition(context.key, context.list, input.cursorId);
  const needle = input.q?.trim().toLowerCase();
  const merge = new Merge(markup.id, plan, leaves, after);

  let page: Loaded[];
  let marks: ReadMark[] | undefined;
  let authors: AuthorsRead | undefined;
  let offset = input.offset ?? 0;
  let total: number;
  let next: string | undefined;
  if (needle) {
    const search = await searchInOrder(merge, needle, { ...input, offset });
    ({ page, offset, total, next } = search);
  } else {
    if (input.withThreadOrMessageId !== undefined && input.offset === undefined && input.cursorId === undefined) {
      const index = await indexOfThread(markup, input, leaves, plan);
      offset = Math.floor(index / input.limit) * input.limit;
    }
    total = leaves.reduce((sum, leaf) => sum + (context.state.counts.get(leaf) ?? 0), 0);
    if (offset === 0 && readsPageCopies(context.state, input)) {
      ({ page, marks, authors, next } = await pageFromCopies(markup.id, input.limit, { plan, after, reader: principal.userId }));
    } else {
      const entries = await merge.take(offset + input.limit + 1);
      const shown = entries.slice(offset, offset + input.limit);
      ({ page, marks } = await loadThreads(markup.id, shown, { userId: principal.userId, state: context.state }));
      next = entries.length > offset + input.limit ? shown.at(-1)?.position : undefined;
    }
  }

  const [viewer, readMarks] = await Promise.all([
    viewerFor(
      principal,
      access,
      page.flatMap((entry) => [entry.thread.userId, ...entry.messages.map((message) => message.userId)]),
      authors,
    ),
    marks ?? readMarksOfPage(markup.id, page, { userId: principal.userId, state: context.state }),
  ]);
  const index = indexReadMarks(readMarks);
  const threads = await Promise.all(
    page.map((entry) => toPublicThread(entry.thread, entry.messages, viewer, readStateOf(entry.thread, entry.messages, index))),
  );
  const cursorId = next === undefined ? null : encodeCursor(context.key, context.list, { k: next });
  return { threads, query: { resolved: input.resolved ?? null }, offset, total, cursorId };
}

/**
 * Whether a page reads the page copies (layout 4: every thread has one): every thread in pin order
 * (the default order, and `pin_desc`), no filter; `offset` and `q` read the index (keys are cheaper
 * to skip than copies).
 */
const readsPageCopies = (state: ThreadIndexState, input: ListThreadsInput) =>
  keepsPageCopies(state) && ORDER_PLANS[input.order].kind === 'pin' && input.resolved === undefined && input.viewMode === undefined;

/**
 * A page in pin order from the page copies: one Query of `limit + 1` copies from the cursor, then
 * side by side the reader's marks on them (one Query of their range, `getReadMarksOfPage`), the
 * authors the copies name (one BatchGet) and the messages of a thread whose copy of them did not fit
 * (`getMessagesOf`; their other authors are read after, by `viewerFor`).
 */
async function pageFromCopies(
  markupId: string,
  limit: number,
  options: { plan: { backward: boolean }; after: string | undefined; reader: string },
): Promise<{ page: Loaded[]; marks: ReadMark[]; authors: AuthorsRead; next: string | undefined }> {
  const copies = await readPageCopies(markupId, { limit: limit + 1, backward: options.plan.backward, after: options.after });
  const shown = copies.threads.slice(0, limit);
  const asked = new Set(shown.flatMap((thread) => [thread.userId, ...(thread.messages ?? []).map((message) => message.userId)]));
  const [found, marks, users] = await Promise.all([
    getMessagesOf(markupId, shown),
    getReadMarksOfPage(
      markupId,
      options.reader,
      shown.map((thread) => ({ id: thread.id, number: thread.number })),
    ),
    getUsers([...asked]),
  ]);
  const positioned = shown.map((thread) => ({ thread, position: sortableNumber(thread.number) }));
  const page = positioned.flatMap(({ thread, position }) => {
    const loaded = found.get(thread.id);
    return loaded ? [{ ...loaded, position }] : [];
  });
  return { page, marks, authors: { asked, found: users }, next: copies.threads.length > limit ? positioned.at(-1)?.position : undefined };
}

interface Loaded {
  thread: ThreadRecord;
  messages: MessageRecord[];
  position: string;
}

/** Who reads a page, and the markup's layout (which says where their message marks are). */
interface Reader {
  userId: string;
  state: ThreadIndexState;
}

/** The reader's marks on a page's threads: one key a thread, plus each message's own key on a markup before layout 3. */
function readMarksOfPage(markupId: string, page: readonly Loaded[], reader: Reader): Promise<ReadMark[]> {
  const legacy = foldsReadMarks(reader.state) ? [] : page.flatMap((entry) => entry.messages.map((message) => message.id));
  return getReadMarksOf(
    markupId,
    reader.userId,
    page.map((entry) => entry.thread.id),
    legacy,
  );
}

/**
 * The threads of `entries` with their messages, in the entries' order: one BatchGet of the
 * threads, whose copies of their messages come with them (`getMessagesOf` reads the messages of a
 * thread that keeps none), and beside it, for a `reader` on a markup at layout 3, that user's
 * marks on them (`getReadMarksOfPage`, from the entries alone: ids and numbers). Before layout 3 the marks are
 * read once the messages are known (`readMarksOfPage`).
 */
async function loadThreads(
  markupId: string,
  entries: readonly IndexEntry[],
  reader?: Reader,
): Promise<{ page: Loaded[]; marks?: ReadMark[] }> {
  const threadIds = entries.map((entry) => entry.threadId);
  const [threads, marks] = await Promise.all([
    getThreadRecords(markupId, threadIds),
    reader !== undefined && foldsReadMarks(reader.state) && threadIds.length > 0
      ? getReadMarksOfPage(
          markupId,
          reader.userId,
          entries.map((entry) => ({ id: entry.threadId, number: threadNumberAt(entry.position) })),
        )
      : undefined,
  ]);
  const found = await getMessagesOf(markupId, threads);
  const page = entries.flatMap((entry) => {
    const loaded = found.get(entry.threadId);
    return loaded ? [{ ...loaded, position: entry.position }] : [];
  });
  if (reader === undefined) return { page };
  return { page, marks: marks ?? (await readMarksOfPage(markupId, page, reader)) };
}

/**
 * Where a thread (or a message's thread) stands in the filtered order: the entries before it in
 * every selected leaf. 404 when it is not among the threads the filter selects.
 */
async function indexOfThread(
  markup: MarkupRecord,
  input: ListThreadsInput,
  leaves: readonly string[],
  plan: { kind: IndexKind; backward: boolean },
): Promise<number> {
  const wanted = input.withThreadOrMessageId!;
  const notFound = () =>
    new NotFoundError(`No thread or message ${wanted} among the threads of markup ${input.markupId} that this filter selects.`);
  const threadId = (await getThreadReference(wanted))?.threadId ?? (await getMessageReference(wanted))?.threadId;
  const thread = threadId ? await getThreadRecord(markup.id, threadId) : undefined;
  if (!thread) throw notFound();
  const own = leaves.find((leaf) => {
    const filter = leafFilter(leaf);
    return filter.resolved === thread.resolved && filter.viewModeId === thread.viewModeId;
  });
  if (!own) throw notFound();
  const position = positionIn(plan.kind, thread, markup);
  const counts = await Promise.all(leaves.map((leaf) => countBefore(markup.id, plan.kind, leaf, position, { backward: plan.backward })));
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * `q`: threads in the order asked for whose messages hold the text, read `SEARCH_BATCH` at a time
 * until `SEARCH_THREAD_BUDGET` threads were examined or the list ends. `total` counts the matches
 * this scan found: exact when it started at the beginning and reached the end. The cursor resumes
 * after the page's last thread, or after the last thread examined when the budget ran out first.
 */
async function searchInOrder(
  merge: Merge,
  needle: string,
  input: ListThreadsInput & { offset: number },
): Promise<{ page: Loaded[]; offset: number; total: number; next?: string }> {
  const matches: Loaded[] = [];
  let examined = 0;
  let lastExamined: string | undefined;
  while (examined < SEARCH_THREAD_BUDGET && !merge.exhausted) {
    const batch = await merge.take(SEARCH_BATCH, SEARCH_BATCH);
    examined += batch.length;
    lastExamined = batch.at(-1)?.position ?? lastExamined;
    for (const entry of (await loadThreads(input.markupId, batch)).page) {
      if (entry.messages.some((message) => message.content.toLowerCase().includes(needle))) matches.push(entry);
    }
  }
  let offset = input.offset;
  const wanted = input.withThreadOrMessageId;
  if (wanted !== undefined && input.cursorId === undefined && input.offset === 0) {
    const index = matches.findIndex((entry) => entry.thread.id === wanted || entry.messages.some((message) => message.id === wanted));
    if (index === -1)
      throw new NotFoundError(`No thread or message ${wanted} among the threads of markup ${input.markupId} that this filter selects.`);
    offset = Math.floor(index / input.limit) * input.limit;
  }
  const page = matches.slice(offset, offset + input.limit);
  const next = matches.length > offset + input.limit ? page.at(-1)?.position : merge.exhausted ? undefined : lastExamined;
  return { page, offset, total: matches.length, next };
}
