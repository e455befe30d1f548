import { createHash } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { getCursorKey } from '../../db/cursor-keys.js';
import { getReadMarks, getReadMarksFor } from '../../db/read-marks.js';
import { getThreadIndexState, THREAD_INDEX_LAYOUT } from '../../db/thread-index.js';
import { getConversation, getThreadWithMessages } from '../../db/threads.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { BadRequestError, NotFoundError } from '../../http/errors.js';
import type { ThreadPageView, ThreadView } from '../../schemas/threads.js';
import { loadMarkupRole } from '../markups/access.js';
import { loadThreadAccess, threadNotFound } from './access.js';
import { indexReadMarks, readStateOf } from './read-state.js';
import { listIndexedThreads } from './thread-pages.js';
import { comparePositions, selectThreads, type ThreadFilter, type ThreadOrder } from './thread-selection.js';
import { toPublicThread, viewerFor } from './views.js';

/**
 * GET /threads/:id: the thread with its messages and the caller's read state, and the thread's
 * `revision` (its version for ETags: every change of the thread or of one of its messages moves it).
 */
export async function getThread(principal: Principal, threadId: string): Promise<{ thread: ThreadView; version: number }> {
  const access = await loadThreadAccess(principal, threadId);
  const found = await getThreadWithMessages(access.markup.id, threadId);
  if (!found) throw threadNotFound(threadId);
  const [marks, viewer] = await Promise.all([
    getReadMarksFor(access.markup.id, principal.userId, [threadId, ...found.messages.map((message) => message.id)]),
    viewerFor(principal, access, [found.thread.userId, ...found.messages.map((message) => message.userId)]),
  ]);
  return { thread: await toPublicThread(found.thread, found.messages, viewer, readStateOf(found.thread, found.messages, indexReadMarks(marks))), version: found.thread.revision };
}

export interface ListThreadsInput extends ThreadFilter {
  markupId: string;
  order: ThreadOrder;
  limit: number;
  offset?: number;
  cursorId?: string;
  withThreadOrMessageId?: string;
}

/**
 * GET /threads. A markup in the current index layout (every markup whose first thread was created
 * with layout 2 of the thread index, and every backfilled one) answers from its index: a page costs the same
 * whatever the markup's size (`thread-pages.ts`). A markup still in the old layout (or in layout 1) is read whole
 * (one Query of its partition, 1 MB per request, plus the caller's read marks), then filtered,
 * ordered and paged here, until `threads backfill` indexes it. `cursorId` holds the position of
 * the last thread of a page in the order asked for, so the next page starts right after it even
 * when threads were added or removed in between; `offset` counts from the start.
 * `withThreadOrMessageId` opens the page that holds that thread (or the thread of that message).
 */
export async function listThreads(principal: Principal, input: ListThreadsInput): Promise<ThreadPageView> {
  if (input.cursorId !== undefined && input.offset !== undefined) throw new BadRequestError('Pass either cursorId or offset, not both.');
  const access = await loadMarkupRole(principal, input.markupId);
  const [state, key] = await Promise.all([getThreadIndexState(input.markupId), getCursorKey()]);
  const list = listIdOf(input);
  if (state.layout === THREAD_INDEX_LAYOUT) return listIndexedThreads(principal, access, input, { state, key, list });
  const [conversation, marks] = await Promise.all([getConversation(input.markupId), getReadMarks(input.markupId, principal.userId)]);
  const entries = selectThreads(access.markup, conversation.threads, conversation.messages, input, input.order);

  let start = input.offset ?? 0;
  if (input.cursorId !== undefined) {
    const position = decodeCursor(key, list, input.cursorId, 'cursorId').p;
    if (!Array.isArray(position) || !position.every((part) => typeof part === 'number')) {
      throw new BadRequestError('cursorId is not a valid cursor for this list.', 'invalid-cursor');
    }
    const after = entries.findIndex((entry) => comparePositions(entry.position, position) > 0);
    start = after === -1 ? entries.length : after;
  } else if (input.withThreadOrMessageId !== undefined && input.offset === undefined) {
    const wanted = input.withThreadOrMessageId;
    const index = entries.findIndex((entry) => entry.thread.id === wanted || entry.messages.some((message) => message.id === wanted));
    if (index === -1) throw new NotFoundError(`No thread or message ${wanted} among the threads of markup ${input.markupId} that this filter selects.`);
    start = Math.floor(index / input.limit) * input.limit;
  }

  const page = entries.slice(start, start + input.limit);
  const last = page.at(-1);
  const cursorId = last && start + page.length < entries.length ? encodeCursor(key, list, { p: last.position }) : null;
  const viewer = await viewerFor(principal, access, page.flatMap((entry) => [entry.thread.userId, ...entry.messages.map((message) => message.userId)]));
  const readMarks = indexReadMarks(marks);
  const threads = await Promise.all(page.map((entry) => toPublicThread(entry.thread, entry.messages, viewer, readStateOf(entry.thread, entry.messages, readMarks))));
  return { threads, query: { resolved: input.resolved ?? null }, offset: start, total: entries.length, cursorId };
}

/** A cursor belongs to one markup, order and filter; another list refuses it. */
function listIdOf(input: ListThreadsInput): string {
  const filter = JSON.stringify([input.order, input.resolved ?? null, input.viewMode ?? null, input.q?.trim().toLowerCase() ?? null]);
  return `threads:${input.markupId}:${createHash('sha256').update(filter).digest('base64url').slice(0, 16)}`;
}
