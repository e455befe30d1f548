import { authorizeOnRecordOf, mayActOnOthers } from '../../auth/authorize.js';
import type { Principal } from '../../auth/principal.js';
import { getItem, type MarkupRecord } from '../../db/items.js';
import { getMessageReference, type MessageReference } from '../../db/messages.js';
import { getThreadRecord, getThreadReference, type ThreadReference } from '../../db/threads.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { loadMarkup, type MarkupRoleAccess } from '../markups/access.js';

/**
 * Who may do what to threads and messages: finding them by id within the caller's reach (authorized
 * for the route's permission), whether the markup takes comments, and what a refused comment write means.
 */

/** A read-only markup takes no new threads or messages (States and transitions: readOnly). */
export function requireOpenForComments(markup: MarkupRecord): void {
  if (markup.readOnly) {
    throw new ForbiddenError(
      `Comments on markup ${markup.id} are paused (readOnly); resume them with PATCH /markups/${markup.id}/read-only first.`,
      'markup-read-only',
    );
  }
}

export interface ThreadAccess extends MarkupRoleAccess {
  reference: ThreadReference;
}

export const threadNotFound = (threadId: string) => new NotFoundError(`Thread ${threadId} does not exist.`);
export const messageNotFound = (messageId: string) => new NotFoundError(`Message ${messageId} does not exist.`);

/** The markup of a thread with the caller's authorized role there: 404 for unknown threads, 403 outside the key's scope or role. */
export async function loadThreadAccess(principal: Principal, threadId: string): Promise<ThreadAccess> {
  const reference = await getThreadReference(threadId);
  if (!reference) throw threadNotFound(threadId);
  // Refusals name the thread asked for, never the markup it is on.
  return {
    ...(await loadMarkup(principal, reference.markupId, { consistent: true, plan: false, subject: `Thread ${threadId}` })),
    reference,
  };
}

/**
 * `loadThreadAccess` for a change to the thread (resolve, move its pin, its screenshot), under the
 * route's own-versus-others rule: an end user who is not the author needs the table's
 * `endUserOthers` role (403 otherwise, before anything is written). A thread's author never
 * changes, so this one check holds for every fresh read that follows; the thread is read for it
 * only when the role alone does not settle it.
 */
export async function loadThreadAccessToChange(principal: Principal, threadId: string): Promise<ThreadAccess> {
  const access = await loadThreadAccess(principal, threadId);
  if (!mayActOnOthers(principal, access.role)) {
    const thread = await getThreadRecord(access.markup.id, threadId);
    if (!thread) throw threadNotFound(threadId);
    authorizeOnRecordOf(principal, access.role, thread.userId);
  }
  return access;
}

export interface MessageAccess extends MarkupRoleAccess {
  reference: MessageReference;
}

export async function loadMessageAccess(principal: Principal, messageId: string): Promise<MessageAccess> {
  const reference = await getMessageReference(messageId);
  if (!reference) throw messageNotFound(messageId);
  return {
    ...(await loadMarkup(principal, reference.markupId, { consistent: true, plan: false, subject: `Message ${messageId}` })),
    reference,
  };
}

/** Why a comment write conditioned on its markup failed: the markup went away, or comments were paused meanwhile. */
export async function explainMarkupRefusal(markupId: string): Promise<never> {
  const current = await getItem(markupId, true);
  if (!current || current.kind !== 'markup') throw new NotFoundError(`Markup ${markupId} does not exist.`);
  requireOpenForComments(current);
  throw new ConflictError(`Markup ${markupId} changed while the comment was written; try again.`);
}

/** A consumed upload or a thread that went away while the write was prepared. */
export function explainWriteRefusal(): never {
  throw new ConflictError(
    'The thread or an attached upload changed while this was written (an upload can be attached once); check and try again.',
  );
}
