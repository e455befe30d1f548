import { createHash } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { getCursorKey } from '../../db/core/cursor-keys.js';
import { getReadMarksOf } from '../../db/read-marks.js';
import { getThreadIndexState } from '../../db/thread-index.js';
import { getThreadWithMessages } from '../../db/threads.js';
import { BadRequestError } from '../../errors.js';
import type { ThreadPageView, ThreadView } from '../../schemas/threads.js';
import { loadMarkup } from '../markups/access.js';
import { loadThreadAccess, threadNotFound } from './access.js';
import { indexReadMarks, readStateOf } from './read-state.js';
import { listIndexedThreads } from './thread-pages.js';
import type { ThreadFilter, ThreadOrder } from './thread-selection.js';
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
    getReadMarksOf(
      access.markup.id,
      principal.userId,
      [threadId],
      found.messages.map((message) => message.id),
    ),
    viewerFor(principal, access, [found.thread.userId, ...found.messages.map((message) => message.userId)]),
  ]);
  return {
    thread: await toPublicThread(found.thread, found.messages, viewer, readStateOf(found.thread, found.messages, indexReadMarks(marks))),
    version: found.thread.revision,
  };
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
 * GET /threads, from the thread index (`shared/db/thread-index.ts`, read by `thread-pages.ts`): a
 * page costs the same whatever the markup's size. The index is the only layout the list reads: a
 * markup whose threads predate it (no `layout`, or layout 1) lists only what thread writes indexed
 * since, until `threads backfill` (admin CLI) indexes it. `cursorId` holds the position of the last
 * thread of a page in the order asked for, so the next page starts right after it even when
 * threads were added or removed in between; `offset` counts from the start.
 * `withThreadOrMessageId` opens the page that holds that thread (or the thread of that message).
 * The index counters and the cursor key are read beside the access check (nothing of them is
 * answered before it passed).
 */
export async function listThreads(principal: Principal, input: ListThreadsInput): Promise<ThreadPageView> {
  if (input.cursorId !== undefined && input.offset !== undefined) throw new BadRequestError('Pass either cursorId or offset, not both.');
  const [access, state, key] = await Promise.all([
    loadMarkup(principal, input.markupId, { plan: false }),
    getThreadIndexState(input.markupId),
    getCursorKey(),
  ]);
  return listIndexedThreads(principal, access, input, { state, key, list: listIdOf(input) });
}

/** A cursor belongs to one markup, order and filter; another list refuses it. */
function listIdOf(input: ListThreadsInput): string {
  const filter = JSON.stringify([input.order, input.resolved ?? null, input.viewMode ?? null, input.q?.trim().toLowerCase() ?? null]);
  return `threads:${input.markupId}:${createHash('sha256').update(filter).digest('base64url').slice(0, 16)}`;
}
