import { randomUUID } from 'node:crypto';
import { authorizeOnRecordOf } from '../../auth/authorize.js';
import type { Principal } from '../../auth/principal.js';
import { markupCommentUpdate } from '../../db/items.js';
import {
  getMessage,
  messageDelete,
  messageReplace,
  messageUnchanged,
  toMessageItem,
  toMessageReferenceItem,
  type MessageRecord,
} from '../../db/messages.js';
import { getReadMarksOf, readMarksUpdate, removeMessageMarks } from '../../db/read-marks.js';
import { unreadCountInvalidation } from '../../db/unread-counts.js';
import { storageChange } from '../../db/storage.js';
import { threadIndexWrites } from '../../db/thread-index.js';
import { getThreadWithMessages, revisedThread, threadRevisionUpdate } from '../../db/threads.js';
import { commit, fromFreshReads, nextTime, putNew, STALE, type TransactItem } from '../../db/core/transact.js';
import { deleteObjectsLater } from '../../events/jobs.js';
import type { MessageView } from '../../schemas/threads.js';
import { BadRequestError, ConflictError } from '../../errors.js';
import { requireVersion, type IfMatch } from '../common/versions.js';
import {
  explainMarkupRefusal,
  explainWriteRefusal,
  loadMessageAccess,
  loadThreadAccess,
  messageNotFound,
  requireOpenForComments,
  type MessageAccess,
} from './access.js';
import { loadThreadRecord } from './change-thread.js';
import { commentEvent } from './events.js';
import { newMessageRecord, prepareMessage, type MessageInput } from './message-content.js';
import { indexReadMarks, messageReadState, readMark, readStateOfWriter } from './read-state.js';
import { toPublicMessage, viewerFor } from './views.js';

/** The fields of an edit that change the message itself (the rest of the body changes its thread). */
const MESSAGE_FIELDS = ['content', 'message', 'mentionIds', 'attachments', 'clipVideos'] as const satisfies readonly (keyof MessageInput)[];

/** The answer to a write: the writer has read what they wrote (Resources: Message, `read`). */
async function writerView(
  principal: Principal,
  access: MessageAccess | Parameters<typeof viewerFor>[1],
  message: MessageRecord,
  at: number,
) {
  const viewer = await viewerFor(principal, access, [message.userId]);
  return toPublicMessage(message, viewer, readStateOfWriter([message], at).messages.get(message.id) ?? { read: true, lastSeenAt: at });
}

/**
 * Messages one thread holds at most. Past it a reply is refused (409 `message-limit`) rather than
 * grow the thread's item and its writers' read-mark items (one `m:` mark a message, about 75 bytes)
 * toward DynamoDB's 400 KB item limit, where the write would fail with a 500.
 */
export const MAX_MESSAGES_PER_THREAD = 2_000;

/** Refuses a reply to a thread that holds MAX_MESSAGES_PER_THREAD messages already (a thread written before its list was kept is not counted). */
function requireRoomForReply(thread: { id: string; messageIds?: string[]; messages?: unknown[] }): void {
  const count = thread.messageIds?.length ?? thread.messages?.length ?? 0;
  if (count >= MAX_MESSAGES_PER_THREAD)
    throw new ConflictError(
      `Thread ${thread.id} holds ${count.toLocaleString('en-US')} messages, the most a thread holds (${MAX_MESSAGES_PER_THREAD.toLocaleString('en-US')}): start a new thread.`,
      'message-limit',
    );
}

/** A message with nothing in it but white space is empty too. */
export function requireSomething(message: { content: string; attachments: unknown[]; clipVideos: unknown[] }): void {
  if (message.content.trim() === '' && message.attachments.length === 0 && message.clipVideos.length === 0) {
    throw new BadRequestError(
      'A message must say something: send content or message (a Delta), attachments or clipVideos.',
      'empty-message',
    );
  }
}

/**
 * POST /threads/:threadId/messages: a reply. It counts as activity of the thread and the markup,
 * is unread for everyone but its writer, and is refused while comments are paused. It moves the
 * thread to its next revision (read state compares revisions), from a fresh read again when
 * another change got there first.
 */
export async function createMessage(principal: Principal, threadId: string, input: MessageInput): Promise<MessageView> {
  const access = await loadThreadAccess(principal, threadId);
  const { markup } = access;
  requireOpenForComments(markup);
  const at = Date.now();
  const prepared = await prepareMessage(access, input, { at });
  const messageId = randomUUID();
  return fromFreshReads(`Thread ${threadId}`, async () => {
    const thread = await loadThreadRecord(markup.id, threadId);
    requireRoomForReply(thread);
    const message = newMessageRecord(markup, { threadId, messageId, userId: principal.userId }, prepared, at, thread.revision + 1);
    requireSomething(message);
    const reference = { threadId, markupId: markup.id, workspaceId: markup.workspaceId, organizationId: markup.organizationId, messageId };
    const items: TransactItem[] = [
      markupCommentUpdate(markup, { at, open: true }),
      threadRevisionUpdate(thread, at, { message: { put: message } }),
      putNew(toMessageItem(message)),
      putNew(toMessageReferenceItem(reference)),
      readMarksUpdate(markup.id, [readMark(principal.userId, 'message', messageId, threadId, message.threadRevision, at)]),
      ...prepared.writes,
      ...threadIndexWrites(markup, thread, revisedThread(thread, at, { message: { put: message } })),
      commentEvent('comment_reply_created', markup, { threadId, messageId }, principal.userId),
    ];
    // The thread changed (or went away) since it was read: read it again.
    if (!(await commit(items, (index) => (index === 0 ? explainMarkupRefusal(markup.id) : index === 1 ? 'retry' : explainWriteRefusal()))))
      return STALE;
    return writerView(principal, access, message, at);
  });
}

export interface UpdateMessageInput extends MessageInput {
  priority?: number | null;
}

/**
 * PATCH /messages/:id: only its writer edits a message. Text, mentions, attachments (the list to
 * keep, by upload id, plus new uploads) and clip videos change as sent; an edit makes the message
 * unread again for everyone else. `priority` sets the priority of the message's thread.
 */
export async function updateMessage(
  principal: Principal,
  messageId: string,
  input: UpdateMessageInput,
  ifMatch?: IfMatch,
): Promise<{ message: MessageView; version: number }> {
  const access = await loadMessageAccess(principal, messageId);
  const { markup, reference } = access;
  return fromFreshReads(`Message ${messageId}`, async () => {
    const [current, thread] = await Promise.all([getMessage(reference), loadThreadRecord(markup.id, reference.threadId)]);
    if (!current) throw messageNotFound(messageId);
    authorizeOnRecordOf(principal, access.role, current.userId);
    // A message's version is its `threadRevision`; `messageReplace` holds only at it, so a change after this check is refused here on the
    // fresh read.
    requireVersion(ifMatch, current.threadRevision, `Message ${messageId}`);
    const at = nextTime(current.modifiedAt);
    const prepared = await prepareMessage(access, input, { at, existing: current });
    // Only a change of what the message says makes it unread for others; `priority` alone changes the thread.
    const changesMessage = MESSAGE_FIELDS.some((field) => input[field] !== undefined);
    // An edit that sends nothing changes nothing (no activity, no event).
    if (!changesMessage && input.priority === undefined)
      return { message: await writerView(principal, access, current, at), version: current.threadRevision };
    const next: MessageRecord = {
      ...current,
      modifiedAt: changesMessage ? at : current.modifiedAt,
      modifiedBy: principal.userId,
      threadRevision: changesMessage ? thread.revision + 1 : current.threadRevision,
      content: prepared.content ?? current.content,
      delta: prepared.delta ?? current.delta,
      mentionIds: prepared.mentionIds ?? current.mentionIds,
      attachments: prepared.attachments ?? current.attachments,
      clipVideos: prepared.clipVideos ?? current.clipVideos,
    };
    requireSomething(next);
    const removedBytes = prepared.removedAttachments.reduce((sum, attachment) => sum + attachment.filesize, 0);
    const items: TransactItem[] = [
      messageReplace(current, next, { guardVersion: ifMatch !== undefined }),
      threadRevisionUpdate(thread, at, { priority: input.priority, message: { put: next } }),
      readMarksUpdate(markup.id, [readMark(principal.userId, 'message', messageId, current.threadId, next.threadRevision, at)]),
      ...(removedBytes > 0 ? [{ Update: storageChange(markup.organizationId, { attachments: -removedBytes }) }] : []),
      ...prepared.writes,
      ...threadIndexWrites(markup, thread, revisedThread(thread, at, { priority: input.priority, message: { put: next } })),
      commentEvent('comment_updated', markup, { threadId: current.threadId, messageId }, principal.userId),
    ];
    // The message or its thread changed since they were read: read them again.
    if (!(await commit(items, (index) => (index <= 1 ? 'retry' : explainWriteRefusal())))) return STALE;
    await deleteObjectsLater(
      prepared.removedAttachments.map((attachment) => attachment.key),
      { messageId },
    );
    return { message: await writerView(principal, access, next, at), version: next.threadRevision };
  });
}

/**
 * GET /messages/:id (an extension of this service): one message as GET /threads/:id shows it, with
 * the caller's read state, and its version (its `threadRevision`): the version PATCH and DELETE
 * /messages/:id compare an If-Match with, which no other read answers (a thread's ETag names the
 * thread's revision, which every message of it moves).
 */
export async function readMessage(principal: Principal, messageId: string): Promise<{ message: MessageView; version: number }> {
  const access = await loadMessageAccess(principal, messageId);
  const message = await getMessage(access.reference);
  if (!message) throw messageNotFound(messageId);
  const [marks, viewer] = await Promise.all([
    getReadMarksOf(access.markup.id, principal.userId, [message.threadId], [message.id]),
    viewerFor(principal, access, [message.userId]),
  ]);
  const { threads, messages } = indexReadMarks(marks);
  const state = messageReadState(message, threads.get(message.threadId), messages.get(message.id));
  return { message: await toPublicMessage(message, viewer, state), version: message.threadRevision };
}

/**
 * DELETE /messages/:id: its writer (contributor or above) or an admin removes a reply with its
 * attachments. A thread's first message opens the thread: delete the thread instead.
 */
export async function deleteMessage(principal: Principal, messageId: string, ifMatch?: IfMatch): Promise<void> {
  const access = await loadMessageAccess(principal, messageId);
  const { markup, reference } = access;
  await fromFreshReads(`Message ${messageId}`, async () => {
    const found = await getThreadWithMessages(markup.id, reference.threadId);
    const message = found?.messages.find((candidate) => candidate.id === messageId);
    if (!found || !message) throw messageNotFound(messageId);
    authorizeOnRecordOf(principal, access.role, message.userId);
    requireVersion(ifMatch, message.threadRevision, `Message ${messageId}`);
    if (found.messages[0]?.id === messageId) {
      throw new BadRequestError(
        `Message ${messageId} opens thread ${reference.threadId}; delete the thread instead (DELETE /threads/${reference.threadId}).`,
        'first-message',
      );
    }
    const bytes = message.attachments.reduce((sum, attachment) => sum + attachment.filesize, 0);
    const at = Date.now();
    const items: TransactItem[] = [
      ...messageDelete(message, { guardVersion: ifMatch !== undefined }),
      threadRevisionUpdate(found.thread, at, { message: { delete: messageId } }),
      ...(bytes > 0 ? [{ Update: storageChange(markup.organizationId, { attachments: -bytes }) }] : []),
      ...threadIndexWrites(markup, found.thread, revisedThread(found.thread, at, { message: { delete: messageId } })),
    ];
    // The message or its thread changed since they were read: read them again.
    if (!(await commit(items, () => 'retry'))) return STALE;
    await removeMessageMarks(markup.id, reference.threadId, messageId);
    await deleteObjectsLater(
      message.attachments.map((attachment) => attachment.key),
      { messageId },
    );
  });
}

/**
 * POST /messages/:id/read: the caller has seen this message as it is now (its thread stays as it
 * was). The mark records the message's revision and is written only while the message is still
 * at it, so an edit that lands meanwhile stays unread.
 */
export async function markMessageRead(principal: Principal, messageId: string): Promise<void> {
  const access = await loadMessageAccess(principal, messageId);
  const { markup, reference } = access;
  await fromFreshReads(`Message ${messageId}`, async () => {
    const message = await getMessage(reference);
    if (!message) throw messageNotFound(messageId);
    const mark = readMark(principal.userId, 'message', messageId, reference.threadId, message.threadRevision, Date.now());
    return (await commit(
      [messageUnchanged(message), readMarksUpdate(markup.id, [mark]), unreadCountInvalidation(markup.id, principal.userId)],
      () => 'retry',
    ))
      ? undefined
      : STALE;
  });
}
