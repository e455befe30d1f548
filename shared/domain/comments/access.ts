import type { Principal } from '../../auth/principal.js';
import { getItem, type MarkupRecord } from '../../db/items.js';
import { getMessageReference, type MessageReference } from '../../db/messages.js';
import { getThreadReference, type ThreadReference } from '../../db/threads.js';
import type { Role } from '../../db/users.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../http/errors.js';
import { loadMarkupRole, type MarkupRoleAccess } from '../markups/access.js';
import { atLeast } from '../roles.js';

/**
 * Who may do what to threads and messages: finding them by id within the caller's reach, the roles
 * their operations need, whether the markup takes comments, and what a refused comment write means.
 */

/** The least role each operation on threads and messages needs; deleting another's needs admin. */
export const COMMENT_ROLE = {
  read: 'viewer',
  write: 'contributor',
  moderate: 'admin',
} as const satisfies Record<string, Role>;

const ACTION_WORDS = {
  read: 'read comments',
  write: 'comment, resolve or move pins',
  moderate: "delete other people's comments",
} as const;

export function requireCommentRole(role: Role, action: keyof typeof COMMENT_ROLE): void {
  const minimum = COMMENT_ROLE[action];
  if (!atLeast(role, minimum)) {
    throw new ForbiddenError(`The ${role} role cannot ${ACTION_WORDS[action]}; it needs ${minimum} or above.`, 'insufficient-role');
  }
}

/** A read-only markup takes no new threads or messages (States and transitions: readOnly). */
export function requireOpenForComments(markup: MarkupRecord): void {
  if (markup.readOnly) {
    throw new ForbiddenError(`Comments on markup ${markup.id} are paused (readOnly); resume them with PATCH /markups/${markup.id}/read-only first.`, 'markup-read-only');
  }
}

export interface ThreadAccess extends MarkupRoleAccess {
  reference: ThreadReference;
}

export const threadNotFound = (threadId: string) => new NotFoundError(`Thread ${threadId} does not exist.`);
export const messageNotFound = (messageId: string) => new NotFoundError(`Message ${messageId} does not exist.`);

/** The markup of a thread with the caller's role there: 404 for unknown threads, 403 outside the key's scope. */
export async function loadThreadAccess(principal: Principal, threadId: string, action: keyof typeof COMMENT_ROLE): Promise<ThreadAccess> {
  const reference = await getThreadReference(threadId);
  if (!reference) throw threadNotFound(threadId);
  const access = await loadMarkupRole(principal, reference.markupId, true);
  requireCommentRole(access.role, action);
  return { ...access, reference };
}

export interface MessageAccess extends MarkupRoleAccess {
  reference: MessageReference;
}

export async function loadMessageAccess(principal: Principal, messageId: string, action: keyof typeof COMMENT_ROLE): Promise<MessageAccess> {
  const reference = await getMessageReference(messageId);
  if (!reference) throw messageNotFound(messageId);
  const access = await loadMarkupRole(principal, reference.markupId, true);
  requireCommentRole(access.role, action);
  return { ...access, reference };
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
  throw new ConflictError('The thread or an attached upload changed while this was written (an upload can be attached once); check and try again.');
}
