import { allows, type AnyRole } from '../../auth/permissions.js';
import type { Principal } from '../../auth/principal.js';
import type { MarkupRecord } from '../../db/items.js';
import type { MessageRecord } from '../../db/messages.js';
import type { ThreadRecord } from '../../db/threads.js';
import { getUsers, type User } from '../../db/users.js';
import { DEFAULT_URL_TTL_SECONDS, presignedGetUrl } from '../../storage/urls.js';
import type { MarkupRoleAccess } from '../markups/access.js';
import type { AuthorView, MessageView, ThreadRecordView, ThreadView } from '../../schemas/threads.js';
import type { ReadState } from './read-state.js';

/** The public shapes of threads and messages (Resources: Thread, Message) as one caller sees them. */

export interface ViewerContext {
  userId: string;
  role: AnyRole;
  markup: MarkupRecord;
  /** Authors by id. */
  users: Map<string, User>;
  /** Lifetime of attachment URLs in seconds. */
  urlTtlSeconds?: number;
}

/** Authors already read: the ids asked for, and the users found (a deleted author's id has none). */
export interface AuthorsRead {
  asked: ReadonlySet<string>;
  found: readonly User[];
}

/**
 * What the views need about the caller: who they are, their role, the authors of what is shown;
 * of `read`, the authors already read, only the ids it did not ask for are read.
 */
export async function viewerFor(
  principal: Principal,
  access: MarkupRoleAccess,
  authorIds: Iterable<string>,
  read: AuthorsRead = { asked: new Set(), found: [] },
): Promise<ViewerContext> {
  const users = new Map(read.found.map((user): [string, User] => [user.id, user]));
  const missing = [...new Set(authorIds)].filter((id) => !read.asked.has(id));
  if (missing.length > 0) for (const user of await getUsers(missing)) users.set(user.id, user);
  return { userId: principal.userId, role: access.role, markup: access.markup, users };
}

// ---------------------------------------------------------------------------------------------
// Scopes: what the caller may do, reported as the markup's `scopes` are
// ---------------------------------------------------------------------------------------------

/** What the viewer may do to a thread, read from the permission table (own versus others' included). */
export function threadScopes(thread: ThreadRecord, viewer: ViewerContext): string[] {
  const scopes = ['view-thread'];
  const whose = thread.userId === viewer.userId ? 'own' : 'others';
  if (allows(viewer.role, 'message:create') && !viewer.markup.readOnly) scopes.push('create-message');
  if (allows(viewer.role, 'thread:update', whose)) scopes.push('resolve-thread', 'update-thread', 'upload-screenshot');
  if (allows(viewer.role, 'thread:delete', whose)) scopes.push('delete-thread');
  return scopes;
}

export function messageScopes(message: MessageRecord, viewer: ViewerContext): string[] {
  const scopes = ['view-message'];
  const whose = message.userId === viewer.userId ? 'own' : 'others';
  if (allows(viewer.role, 'message:update', whose)) scopes.push('update-message');
  if (allows(viewer.role, 'message:delete', whose)) scopes.push('delete-message');
  return scopes;
}

// ---------------------------------------------------------------------------------------------
// Public shapes (Resources: Thread, Message)
// ---------------------------------------------------------------------------------------------

/** The author object: API users and members are never guests; external (end) users always are. */
export function authorOf(userId: string, users: Map<string, User>): AuthorView {
  const user = users.get(userId);
  if (!user) return { id: userId, createdAt: 0, modifiedAt: 0, name: 'Former user', guest: false };
  return { id: user.id, createdAt: user.createdAt, modifiedAt: user.modifiedAt, name: user.name, guest: user.kind === 'external' };
}

export async function toPublicMessage(
  message: MessageRecord,
  viewer: ViewerContext,
  state: { read: boolean; lastSeenAt: number },
): Promise<MessageView> {
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
        url: await presignedGetUrl(attachment.key, { ttlSeconds, contentType: attachment.mimeType, filename: attachment.originalFilename }),
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

/** The fields of a Thread that depend on its markup's type (`projectId` on every type). */
type ThreadTypeFields = Pick<
  ThreadView,
  | 'projectId'
  | 'proxyUrl'
  | 'originalUrl'
  | 'canonicalUrl'
  | 'elements'
  | 'parents'
  | 'browserContext'
  | 'viewModeId'
  | 'anchor'
  | 'projectImageId'
  | 'offsetXPercentage'
  | 'offsetYPercentage'
  | 'startTime'
  | 'endTime'
  | 'pageNumber'
  | 'textHighlight'
>;

/** The fields a thread of each markup type adds (Resources: Thread). */
function typeFields(thread: ThreadRecord): ThreadTypeFields {
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
        anchor: thread.anchor ?? null,
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

export async function toPublicThread(
  thread: ThreadRecord,
  messages: readonly MessageRecord[],
  viewer: ViewerContext,
  state: ReadState,
): Promise<ThreadView> {
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
export function threadRecordOf(thread: ThreadRecord): ThreadRecordView {
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
      return {
        ...base,
        pageNumber: thread.pageNumber ?? null,
        pageRelativeX: thread.offsetXPercentage,
        pageRelativeY: thread.offsetYPercentage,
      };
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
