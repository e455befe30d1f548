import { randomUUID } from 'node:crypto';
import type { MarkupRecord } from '../../db/items.js';
import { markupTagItem } from '../../db/markup-records.js';
import type { AttachmentRecord, ClipVideoRecord, Delta, MessageRecord } from '../../db/messages.js';
import { put, type TransactItem } from '../../db/core/transact.js';
import { consumeUploadItem, getUploads } from '../../db/uploads.js';
import { findMembers } from '../../db/members.js';
import { statusOf } from '../../db/users.js';
import { BadRequestError, ForbiddenError, InvalidInputError } from '../../errors.js';
import type { MarkupRoleAccess } from '../markups/access.js';
import { mentionIdsOf, resolveMessageText, TextMismatch } from './delta.js';

/**
 * What a message says and carries: its text (plain and Delta, in step), the users it mentions
 * (active members of the workspace), its attachments (confirmed uploads, each used once) and clip videos.
 */

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
 * leaves out stay undefined (an edit keeps them). Mentions found in the text are reported at its
 * `message` field, those sent as ids at `mentionIds`.
 * Attachments are confirmed `message_attachment` uploads made for this markup, each used once; an
 * edit lists the attachments to keep (by their upload id) with any new ones.
 */
export async function prepareMessage(
  access: MarkupRoleAccess,
  input: MessageInput,
  options: { at: number; existing?: MessageRecord },
): Promise<PreparedMessage> {
  const { markup } = access;
  let text;
  try {
    text = resolveMessageText(input);
  } catch (error) {
    if (error instanceof TextMismatch) throw new InvalidInputError([{ field: 'content', detail: error.message }]);
    throw error;
  }
  // Mentions in the Delta are always mentioned, also when an edit sends only mentionIds (the Delta stays).
  const shownDelta = text?.delta ?? options.existing?.delta;
  const fromDelta = shownDelta ? mentionIdsOf(shownDelta) : [];
  const mentionIds =
    input.mentionIds !== undefined || text !== undefined
      ? [...new Set([...(input.mentionIds ?? options.existing?.mentionIds ?? []), ...fromDelta])]
      : undefined;
  if (mentionIds && mentionIds.length > MAX_MENTIONS)
    throw new InvalidInputError([{ field: 'mentionIds', detail: `must name at most ${MAX_MENTIONS} users` }]);
  const newMentions = mentionIds?.filter((id) => !options.existing?.mentionIds.includes(id)) ?? [];
  await requireMembers(markup.workspaceId, newMentions, input.mentionIds ? 'mentionIds' : 'message');

  const writes: TransactItem[] = newMentions.map((userId) => put(markupTagItem(markup.id, userId, options.at)));
  let attachments: AttachmentRecord[] | undefined;
  let removedAttachments: AttachmentRecord[] = [];
  if (input.attachments !== undefined) {
    const kept = new Map((options.existing?.attachments ?? []).map((attachment) => [attachment.id, attachment]));
    const fileIds = input.attachments.map((attachment) => attachment.fileId);
    if (new Set(fileIds).size !== fileIds.length)
      throw new InvalidInputError([{ field: 'attachments', detail: 'lists the same fileId more than once' }]);
    const added = await attachmentsFrom(
      access,
      fileIds.filter((fileId) => !kept.has(fileId)),
      options.at,
    );
    attachments = fileIds.map((fileId) => kept.get(fileId) ?? (added.get(fileId) as AttachmentRecord));
    removedAttachments = [...kept.values()].filter((attachment) => !fileIds.includes(attachment.id));
    writes.push(...[...added.keys()].map((fileId) => consumeUploadItem(fileId, markup.id, new Date(options.at).toISOString())));
  }
  const clipVideos = input.clipVideos?.map((clip): ClipVideoRecord => ({
    id: randomUUID(),
    createdAt: options.at,
    modifiedAt: options.at,
    ...clip,
  }));
  return { content: text?.content, delta: text?.delta, mentionIds, attachments, clipVideos, writes, removedAttachments };
}

/**
 * Every id must be an active member of the workspace: mentions notify people who can see the
 * markup, and someone merely invited has not joined (no key, no access), so is refused like a stranger.
 */
async function requireMembers(workspaceId: string, userIds: readonly string[], field: string): Promise<void> {
  if (userIds.length === 0) return;
  const found = await findMembers(workspaceId, userIds);
  const strangers = userIds.filter((userId) => {
    const member = found.get(userId);
    return member === undefined || statusOf(member) !== 'active';
  });
  if (strangers.length > 0) {
    throw new InvalidInputError([{ field, detail: `mentions users who are not members of this workspace: ${strangers.join(', ')}` }]);
  }
}

async function attachmentsFrom(access: MarkupRoleAccess, fileIds: readonly string[], at: number): Promise<Map<string, AttachmentRecord>> {
  if (fileIds.length === 0) return new Map();
  const uploads = new Map((await getUploads(fileIds)).map((upload) => [upload.fileId, upload]));
  const attachments = new Map<string, AttachmentRecord>();
  for (const fileId of fileIds) {
    const upload = uploads.get(fileId);
    if (!upload)
      throw new BadRequestError(`Attachment ${fileId} is not a known upload (or its policy expired unconfirmed).`, 'unknown-file');
    if (upload.organizationId !== access.markup.organizationId || upload.workspaceId !== access.markup.workspaceId) {
      throw new ForbiddenError(`Attachment ${fileId} was uploaded into another workspace.`, 'file-in-another-workspace');
    }
    if (upload.resourceType !== 'message_attachment' || upload.resourceId !== access.markup.id) {
      throw new BadRequestError(
        `Upload ${fileId} is not a message_attachment of markup ${access.markup.id}; request its policy with resourceType message_attachment and resourceId ${access.markup.id}.`,
        'wrong-resource',
      );
    }
    if (upload.state === 'issued')
      throw new BadRequestError(`Upload ${fileId} is not confirmed yet: call POST /uploads/upload-complete first.`, 'upload-not-confirmed');
    if (upload.state === 'consumed')
      throw new BadRequestError(
        `Upload ${fileId} is already attached elsewhere; upload the file again to attach it twice.`,
        'file-already-used',
      );
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
