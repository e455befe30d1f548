import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { getConfig } from '../config.js';
import { recordEvent, type EventType } from '../db/events.js';
import { itemIndexKeys, itemKey, type MarkupRecord } from '../db/items.js';
import { markupTagItem } from '../db/markup-records.js';
import {
  getMessageReference,
  getThreadReference,
  type AttachmentRecord,
  type ClipVideoRecord,
  type Delta,
  type MessageRecord,
  type MessageReference,
  type ReadMark,
  type ThreadReference,
} from '../db/threads.js';
import { put, type TransactItem } from '../db/transact.js';
import { consumeUploadItem, getUploads } from '../db/uploads.js';
import { getUsers, memberKey, type Role, type User } from '../db/users.js';
import { batchGet } from '../db/transact.js';
import { BadRequestError, ForbiddenError, NotFoundError, ValidationError } from '../http/errors.js';
import { logger } from '../logger.js';
import { mentionIdsOf, resolveMessageText, TextMismatch } from './delta.js';
import { loadMarkupRole, type MarkupRoleAccess } from './markups/access.js';
import { atLeast } from './roles.js';
import type { ViewerContext } from './thread-view.js';

/**
 * What threads and messages share: finding them by id within the caller's reach, the roles their
 * operations need, turning a message request into a record, and committing a write.
 */

// ---------------------------------------------------------------------------------------------
// Access
// ---------------------------------------------------------------------------------------------

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

/** What the views need about the caller: who they are, their role, the authors of what is shown. */
export async function viewerFor(principal: Principal, access: MarkupRoleAccess, authorIds: Iterable<string>): Promise<ViewerContext> {
  const users = new Map((await getUsers([...new Set(authorIds)])).map((user): [string, User] => [user.id, user]));
  return { userId: principal.userId, role: access.role, markup: access.markup, users };
}

// ---------------------------------------------------------------------------------------------
// Message content: text, mentions, attachments, clip videos
// ---------------------------------------------------------------------------------------------

export const MAX_ATTACHMENTS = 10;
export const MAX_CLIP_VIDEOS = 10;
export const MAX_MENTIONS = 50;

export interface ClipVideoInput {
  title: string;
  sharedUrl: string;
  width: number;
  height: number;
}

export interface MessageInput {
  content?: string;
  message?: Delta;
  mentionIds?: string[];
  attachments?: { fileId: string }[];
  clipVideos?: ClipVideoInput[];
}

/** A message request turned into what gets stored, with the writes that go with it. */
export interface PreparedMessage {
  content?: string;
  delta?: Delta;
  mentionIds?: string[];
  attachments?: AttachmentRecord[];
  clipVideos?: ClipVideoRecord[];
  /** Consumes the newly attached uploads and tags the mentioned users. */
  writes: TransactItem[];
  /** Attachments dropped by an edit (their objects and bytes go after the write). */
  removedAttachments: AttachmentRecord[];
}

/**
 * Checks a message request against the markup and turns it into stored fields. Fields the request
 * leaves out stay undefined (an edit keeps them). `pointer` prefixes field pointers (`/body`).
 * Attachments are confirmed `message_attachment` uploads made for this markup, each used once; an
 * edit lists the attachments to keep (by their upload id) with any new ones.
 */
export async function prepareMessage(
  access: MarkupRoleAccess,
  input: MessageInput,
  options: { at: number; messageField: string; existing?: MessageRecord },
): Promise<PreparedMessage> {
  const { markup } = access;
  let text;
  try {
    text = resolveMessageText(input);
  } catch (error) {
    if (error instanceof TextMismatch) throw new ValidationError([{ pointer: '/body/content', detail: error.message }]);
    throw error;
  }
  // Mentions in the Delta are always mentioned, also when an edit sends only mentionIds (the Delta stays).
  const shownDelta = text?.delta ?? options.existing?.delta;
  const fromDelta = shownDelta ? mentionIdsOf(shownDelta) : [];
  const mentionIds = input.mentionIds !== undefined || text !== undefined ? [...new Set([...(input.mentionIds ?? options.existing?.mentionIds ?? []), ...fromDelta])] : undefined;
  if (mentionIds && mentionIds.length > MAX_MENTIONS) throw new ValidationError([{ pointer: '/body/mentionIds', detail: `must name at most ${MAX_MENTIONS} users` }]);
  const newMentions = mentionIds?.filter((id) => !options.existing?.mentionIds.includes(id)) ?? [];
  await requireMembers(markup.workspaceId, newMentions, input.mentionIds ? '/body/mentionIds' : options.messageField);

  const writes: TransactItem[] = newMentions.map((userId) => put(markupTagItem(markup.id, userId, options.at)));
  let attachments: AttachmentRecord[] | undefined;
  let removedAttachments: AttachmentRecord[] = [];
  if (input.attachments !== undefined) {
    const kept = new Map((options.existing?.attachments ?? []).map((attachment) => [attachment.id, attachment]));
    const fileIds = input.attachments.map((attachment) => attachment.fileId);
    if (new Set(fileIds).size !== fileIds.length) throw new ValidationError([{ pointer: '/body/attachments', detail: 'lists the same fileId more than once' }]);
    const added = await attachmentsFrom(access, fileIds.filter((fileId) => !kept.has(fileId)), options.at);
    attachments = fileIds.map((fileId) => kept.get(fileId) ?? (added.get(fileId) as AttachmentRecord));
    removedAttachments = [...kept.values()].filter((attachment) => !fileIds.includes(attachment.id));
    writes.push(...[...added.keys()].map((fileId) => consumeUploadItem(fileId, markup.id, new Date(options.at).toISOString())));
  }
  const clipVideos = input.clipVideos?.map((clip): ClipVideoRecord => ({ id: randomUUID(), createdAt: options.at, modifiedAt: options.at, ...clip }));
  return { content: text?.content, delta: text?.delta, mentionIds, attachments, clipVideos, writes, removedAttachments };
}

/** Every id must be a member of the workspace: mentions notify people who can see the markup. */
async function requireMembers(workspaceId: string, userIds: readonly string[], pointer: string): Promise<void> {
  if (userIds.length === 0) return;
  const found = new Set((await batchGet(userIds.map((userId) => memberKey(workspaceId, userId)))).map((item) => item.userId as string));
  const strangers = userIds.filter((userId) => !found.has(userId));
  if (strangers.length > 0) {
    throw new ValidationError([{ pointer, detail: `mentions users who are not members of this workspace: ${strangers.join(', ')}` }]);
  }
}

async function attachmentsFrom(access: MarkupRoleAccess, fileIds: readonly string[], at: number): Promise<Map<string, AttachmentRecord>> {
  if (fileIds.length === 0) return new Map();
  const uploads = new Map((await getUploads(fileIds)).map((upload) => [upload.fileId, upload]));
  const attachments = new Map<string, AttachmentRecord>();
  for (const fileId of fileIds) {
    const upload = uploads.get(fileId);
    if (!upload) throw new BadRequestError(`Attachment ${fileId} is not a known upload (or its policy expired unconfirmed).`, 'unknown-file');
    if (upload.organizationId !== access.markup.organizationId || upload.workspaceId !== access.markup.workspaceId) {
      throw new ForbiddenError(`Attachment ${fileId} was uploaded into another workspace.`, 'file-in-another-workspace');
    }
    if (upload.resourceType !== 'message_attachment' || upload.resourceId !== access.markup.id) {
      throw new BadRequestError(`Upload ${fileId} is not a message_attachment of markup ${access.markup.id}; request its policy with resourceType message_attachment and resourceId ${access.markup.id}.`, 'wrong-resource');
    }
    if (upload.state === 'issued') throw new BadRequestError(`Upload ${fileId} is not confirmed yet: call POST /uploads/upload-complete first.`, 'upload-not-confirmed');
    if (upload.state === 'consumed') throw new BadRequestError(`Upload ${fileId} is already attached elsewhere; upload the file again to attach it twice.`, 'file-already-used');
    attachments.set(fileId, {
      id: fileId,
      createdAt: at,
      modifiedAt: at,
      key: upload.key,
      etag: upload.etag ?? '',
      mimeType: upload.contentType,
      originalFilename: upload.filename,
      filesize: upload.filesize,
    });
  }
  return attachments;
}

/**
 * A new message of a thread from a prepared request, written by `userId` at `at`; its change makes
 * thread revision `threadRevision`.
 */
export function newMessageRecord(
  markup: MarkupRecord,
  ids: { threadId: string; messageId: string; userId: string },
  prepared: PreparedMessage,
  at: number,
  threadRevision: number,
): MessageRecord {
  return {
    id: ids.messageId,
    threadId: ids.threadId,
    markupId: markup.id,
    workspaceId: markup.workspaceId,
    organizationId: markup.organizationId,
    userId: ids.userId,
    createdAt: at,
    modifiedAt: at,
    modifiedBy: ids.userId,
    threadRevision,
    content: prepared.content ?? '',
    delta: prepared.delta ?? { ops: [{ insert: '\n' }] },
    mentionIds: prepared.mentionIds ?? [],
    attachments: prepared.attachments ?? [],
    clipVideos: prepared.clipVideos ?? [],
  };
}

/** A read mark: the user saw the thread or message as it was at thread revision `seenRevision`, at time `at`. */
export function readMark(userId: string, subject: ReadMark['subject'], subjectId: string, threadId: string, seenRevision: number, at: number): ReadMark {
  return { userId, subject, subjectId, threadId, seenRevision, seenAt: at };
}

// ---------------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------------

/**
 * The markup side of a comment write: moves `activeThreads` (unresolved threads) and the markup's
 * activity time with its index key. With `open`, the write also requires that comments are not
 * paused, so pausing and commenting cannot cross.
 */
export function markupCommentUpdate(markup: MarkupRecord, options: { at: number; activeDelta?: number; open?: boolean }): TransactItem {
  const activityKey = itemIndexKeys({ ...markup, activityAt: options.at }).GSI3SK;
  const values: Record<string, unknown> = { ':at': options.at };
  const sets = ['activityAt = :at'];
  if (activityKey) {
    sets.push('GSI3SK = :activityKey');
    values[':activityKey'] = activityKey;
  }
  let expression = `SET ${sets.join(', ')}`;
  if (options.activeDelta) {
    expression += ' ADD activeThreads :delta';
    values[':delta'] = options.activeDelta;
  }
  const conditions = ['attribute_exists(PK)'];
  if (options.open) {
    conditions.push('readOnly = :false');
    values[':false'] = false;
  }
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: itemKey(markup.id),
      UpdateExpression: expression,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeValues: values,
    },
  };
}

/** Records a comment event for webhooks; a failure is logged, never undoes the write. */
export async function recordCommentEvent(type: EventType, markup: MarkupRecord, ids: { threadId: string; messageId?: string }): Promise<void> {
  try {
    await recordEvent({ type, workspaceId: markup.workspaceId, markupId: markup.id, ...ids });
  } catch (error) {
    logger.error('comment event not recorded', { type, markupId: markup.id, ...ids, error });
  }
}
