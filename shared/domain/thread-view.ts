import type { MarkupRecord } from '../db/items.js';
import type { MessageRecord } from '../db/messages.js';
import type { ReadMark } from '../db/read-marks.js';
import type { ThreadRecord } from '../db/threads.js';
import type { Role, User } from '../db/users.js';
import { DEFAULT_URL_TTL_SECONDS, presignedGetUrl } from '../storage/urls.js';
import { atLeast } from './roles.js';

// ---------------------------------------------------------------------------------------------
// Read state (States and transitions: "Thread or message unread")
// ---------------------------------------------------------------------------------------------

/** One user's read marks on a markup, by the thread or message they mark. */
export interface ReadMarks {
  threads: Map<string, ReadMark>;
  messages: Map<string, ReadMark>;
}

export function indexReadMarks(marks: readonly ReadMark[]): ReadMarks {
  const index: ReadMarks = { threads: new Map(), messages: new Map() };
  for (const mark of marks) (mark.subject === 'thread' ? index.threads : index.messages).set(mark.subjectId, mark);
  return index;
}

export interface ReadState {
  /** The thread was marked and every message is read. */
  read: boolean;
  unreadMessageCount: number;
  /** When the user last marked the thread or one of its messages; 0 when never. */
  lastSeenAt: number;
  /** Per message: read, and when the user last saw it (0 when never). */
  messages: Map<string, { read: boolean; lastSeenAt: number }>;
}

/**
 * What one user has read of one thread. Every change of a message moves its thread's `revision`
 * and the message keeps the revision it made (`threadRevision`); a mark keeps the revision it
 * covers. Marking a thread covers every message as it was at that revision; marking a message
 * covers that message as it was. A message is read when a mark covers its last change, so a new
 * or edited message is unread again for everyone who saw the earlier state (its writer marks it
 * in the same write). The thread is read only when it was itself marked and every message is
 * read. Revisions, not clocks, decide, so two servers' clocks can never make an unseen change
 * look read.
 */
export function readStateOf(thread: ThreadRecord, messages: readonly MessageRecord[], marks: ReadMarks): ReadState {
  const threadMark = marks.threads.get(thread.id);
  let unread = 0;
  let lastSeenAt = threadMark?.seenAt ?? 0;
  const perMessage = new Map<string, { read: boolean; lastSeenAt: number }>();
  for (const message of messages) {
    const messageMark = marks.messages.get(message.id);
    const covered = Math.max(threadMark?.seenRevision ?? 0, messageMark?.seenRevision ?? 0);
    const read = (threadMark !== undefined || messageMark !== undefined) && covered >= message.threadRevision;
    const seenAt = Math.max(threadMark?.seenAt ?? 0, messageMark?.seenAt ?? 0);
    if (!read) unread += 1;
    lastSeenAt = Math.max(lastSeenAt, seenAt);
    perMessage.set(message.id, { read, lastSeenAt: seenAt });
  }
  return { read: threadMark !== undefined && unread === 0, unreadMessageCount: unread, lastSeenAt, messages: perMessage };
}

/** The state a response to a write reports: the writer has seen what they wrote. */
export function readStateOfWriter(messages: readonly MessageRecord[], at: number): ReadState {
  return {
    read: true,
    unreadMessageCount: 0,
    lastSeenAt: at,
    messages: new Map(messages.map((message) => [message.id, { read: true, lastSeenAt: at }])),
  };
}

// ---------------------------------------------------------------------------------------------
// Scopes: what the caller may do, reported as the markup's `scopes` are
// ---------------------------------------------------------------------------------------------

export interface ViewerContext {
  userId: string;
  role: Role;
  markup: MarkupRecord;
  /** Authors by id. */
  users: Map<string, User>;
  /** Lifetime of attachment URLs in seconds. */
  urlTtlSeconds?: number;
}

/** Threads and messages may be written by contributors and above; admins may delete anyone's. */
export function threadScopes(thread: ThreadRecord, viewer: ViewerContext): string[] {
  const scopes = ['view-thread'];
  const contributor = atLeast(viewer.role, 'contributor');
  if (contributor && !viewer.markup.readOnly) scopes.push('create-message');
  if (contributor) scopes.push('resolve-thread', 'update-thread', 'upload-screenshot');
  if (thread.userId === viewer.userId ? contributor : atLeast(viewer.role, 'admin')) scopes.push('delete-thread');
  return scopes;
}

export function messageScopes(message: MessageRecord, viewer: ViewerContext): string[] {
  const scopes = ['view-message'];
  const own = message.userId === viewer.userId;
  if (own && atLeast(viewer.role, 'contributor')) scopes.push('update-message');
  if (own ? atLeast(viewer.role, 'contributor') : atLeast(viewer.role, 'admin')) scopes.push('delete-message');
  return scopes;
}

// ---------------------------------------------------------------------------------------------
// Public shapes (Resources: Thread, Message)
// ---------------------------------------------------------------------------------------------

/** The author object: API users and members are never guests; exchange-token end users will be. */
export function authorOf(userId: string, users: Map<string, User>): { id: string; createdAt: number; modifiedAt: number; name: string; guest: boolean } {
  const user = users.get(userId);
  if (!user) return { id: userId, createdAt: 0, modifiedAt: 0, name: 'Former user', guest: false };
  return { id: user.id, createdAt: user.createdAt, modifiedAt: user.modifiedAt, name: user.name, guest: (user.kind as string) === 'guest' };
}

export async function toPublicMessage(message: MessageRecord, viewer: ViewerContext, state: { read: boolean; lastSeenAt: number }): Promise<Record<string, unknown>> {
  const ttlSeconds = viewer.urlTtlSeconds ?? DEFAULT_URL_TTL_SECONDS;
  return {
    id: message.id,
    createdAt: message.createdAt,
    modifiedAt: message.modifiedAt,
    scopes: messageScopes(message, viewer),
    assignedRoleSlugs: [],
    threadId: message.threadId,
    message: message.content,
    messageJson: message.delta,
    user: authorOf(message.userId, viewer.users),
    userMetaData: { lastSeenAt: state.lastSeenAt },
    attachments: await Promise.all(
      message.attachments.map(async (attachment) => ({
        id: attachment.id,
        createdAt: attachment.createdAt,
        modifiedAt: attachment.modifiedAt,
        messageId: message.id,
        url: await presignedGetUrl(attachment.key, { ttlSeconds }),
        etag: attachment.etag,
        mimeType: attachment.mimeType,
        originalFilename: attachment.originalFilename,
        filesize: attachment.filesize,
      })),
    ),
    clipVideos: message.clipVideos.map((clip) => ({ ...clip, messageId: message.id })),
    content: message.content,
    mentionIds: message.mentionIds,
    read: state.read,
  };
}

/** The fields a thread of each markup type adds (Resources: Thread). */
function typeFields(thread: ThreadRecord): Record<string, unknown> {
  switch (thread.kind) {
    case 'webpage':
      return {
        projectId: thread.markupId,
        proxyUrl: thread.url,
        originalUrl: thread.url,
        canonicalUrl: thread.canonicalUrl,
        elements: (thread.elements ?? []).map((element) => ({ ...element, threadId: thread.id })),
        parents: (thread.parents ?? []).map((parent) => ({
          id: parent.id,
          createdAt: parent.createdAt,
          modifiedAt: parent.modifiedAt,
          path: parent.path,
          depth: parent.depth,
          proxyUrl: parent.url,
          originalUrl: parent.url,
          canonicalUrl: parent.canonicalUrl,
        })),
        browserContext: thread.browserContext ?? null,
        viewModeId: thread.viewModeId ?? null,
      };
    case 'pdf':
      return {
        projectId: thread.markupId,
        projectImageId: thread.projectImageId ?? null,
        offsetXPercentage: thread.offsetXPercentage,
        offsetYPercentage: thread.offsetYPercentage,
        pageNumber: thread.pageNumber ?? null,
        textHighlight: thread.textHighlight ?? null,
      };
    case 'image':
    case 'video':
      return {
        projectId: thread.markupId,
        projectImageId: thread.projectImageId ?? null,
        offsetXPercentage: thread.offsetXPercentage,
        offsetYPercentage: thread.offsetYPercentage,
        ...mediaTimesOf(thread),
      };
  }
}

/**
 * `startTime`/`endTime` are numbers (seconds) in the spec: a thread pinned without a media time
 * is at 0, and one without an end ends where it starts.
 */
function mediaTimesOf(thread: ThreadRecord): { startTime: number; endTime: number } {
  const startTime = thread.startTime ?? 0;
  return { startTime, endTime: thread.endTime ?? startTime };
}

export async function toPublicThread(thread: ThreadRecord, messages: readonly MessageRecord[], viewer: ViewerContext, state: ReadState): Promise<Record<string, unknown>> {
  return {
    id: thread.id,
    createdAt: thread.createdAt,
    modifiedAt: thread.modifiedAt,
    scopes: threadScopes(thread, viewer),
    assignedRoleSlugs: [],
    user: authorOf(thread.userId, viewer.users),
    number: thread.number,
    resolved: thread.resolved,
    priority: thread.priority,
    messages: await Promise.all(
      messages.map((message) => toPublicMessage(message, viewer, state.messages.get(message.id) ?? { read: false, lastSeenAt: 0 })),
    ),
    userMetaData: { lastSeenAt: state.lastSeenAt },
    lastActivityAt: thread.lastActivityAt,
    annotations: thread.annotations ?? null,
    read: state.read,
    unreadMessageCount: state.unreadMessageCount,
    hasScreenshot: thread.screenshot !== undefined,
    ...typeFields(thread),
  };
}

/** The thread record move-pin answers (Resources: Thread, "Thread record returned by move-pin"). */
export function threadRecordOf(thread: ThreadRecord): Record<string, unknown> {
  const base = { id: thread.id, userId: thread.userId, projectId: thread.markupId, number: thread.number, resolved: thread.resolved };
  switch (thread.kind) {
    case 'webpage': {
      const url = thread.url ? new URL(thread.url) : undefined;
      return {
        ...base,
        proxyHostId: url?.host ?? null,
        urlPath: url ? `${url.pathname}${url.search}` : null,
        canonicalUrl: thread.canonicalUrl ?? null,
        viewModeId: thread.viewModeId ?? null,
      };
    }
    case 'pdf':
      return { ...base, pageNumber: thread.pageNumber ?? null, pageRelativeX: thread.offsetXPercentage, pageRelativeY: thread.offsetYPercentage };
    case 'image':
    case 'video':
      return {
        ...base,
        projectImageId: thread.projectImageId ?? null,
        offsetXPercentage: thread.offsetXPercentage,
        offsetYPercentage: thread.offsetYPercentage,
        ...mediaTimesOf(thread),
      };
  }
}
