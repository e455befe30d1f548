import { createHash, randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { getConfig } from '../config.js';
import { getCursorKey } from '../db/cursor-keys.js';
import { getItem, type MarkupRecord } from '../db/items.js';
import { viewModeCountUpdate } from '../db/markup-records.js';
import { storageChange } from '../db/storage.js';
import {
  getConversation,
  getReadMarks,
  getReadMarksFor,
  getThreadRecord,
  readMarkKeysOf,
  getThreadWithMessages,
  messageKey,
  messageReferenceKey,
  nextThreadNumber,
  threadKey,
  threadReferenceKey,
  toMessageItem,
  toMessageReferenceItem,
  toReadMarkItem,
  toThreadItem,
  toThreadReferenceItem,
  storedObjectsOf,
  type Delta,
  type ThreadElementRecord,
  type ThreadKind,
  type ThreadParentRecord,
  type ThreadRecord,
} from '../db/threads.js';
import { batchDelete, commit, fromFreshReads, nextTime, put, putNew, STALE, type TransactItem } from '../db/transact.js';
import { deleteObjectsLater } from '../events/jobs.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import { BadRequestError, ConflictError, NotFoundError, ValidationError } from '../http/errors.js';
import {
  loadThreadAccess,
  markupCommentUpdate,
  newMessageRecord,
  prepareMessage,
  readMark,
  recordCommentEvent,
  requireCommentRole,
  requireOpenForComments,
  threadNotFound,
  viewerFor,
  type ClipVideoInput,
  type ThreadAccess,
} from './comments.js';
import { loadMarkupRole } from './markups/access.js';
import { VIEW_MODES } from './markups/view-modes.js';
import { comparePositions, selectThreads, type ThreadFilter, type ThreadOrder } from './thread-list.js';
import { indexReadMarks, readStateOf, readStateOfWriter, threadRecordOf, toPublicThread } from './thread-view.js';

// ---------------------------------------------------------------------------------------------
// Creation (POST /threads)
// ---------------------------------------------------------------------------------------------

export interface ElementInput {
  elementPath: string;
  offsetXPercentage: number;
  offsetYPercentage: number;
}

export interface ElementParentInput {
  url: string;
  canonicalUrl: string;
  path: string;
  depth: number;
}

export interface CreateThreadInput {
  isImageThread: boolean;
  projectId?: string;
  projectImageId?: string;
  url: string;
  canonicalUrl: string;
  elements: ElementInput[];
  offsetXPercentage: number;
  offsetYPercentage: number;
  startTime?: number;
  endTime?: number;
  message: Delta;
  browserContext: Record<string, unknown>;
  elementParents: ElementParentInput[];
  viewModeId: string;
  attachments?: { fileId: string }[];
  clipVideos?: ClipVideoInput[];
  width?: number;
  height?: number;
  annotations?: Record<string, unknown>;
  textHighlight?: Record<string, unknown>;
  pageNumber?: number;
  requireDimensionsOverride?: boolean;
  priority?: number;
}

const invalid = (pointer: string, detail: string) => new ValidationError([{ pointer: `/body/${pointer}`, detail }]);

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function elementsOf(elements: readonly ElementInput[], at: number): ThreadElementRecord[] {
  return elements.map((element) => ({
    id: randomUUID(),
    createdAt: at,
    modifiedAt: at,
    path: element.elementPath,
    offsetXPercentage: element.offsetXPercentage,
    offsetYPercentage: element.offsetYPercentage,
  }));
}

function parentsOf(parents: readonly ElementParentInput[], at: number): ThreadParentRecord[] {
  return parents.map((parent, index) => {
    if (!isHttpUrl(parent.url)) throw invalid(`elementParents/${index}/url`, 'must be an absolute http or https URL');
    return { id: randomUUID(), createdAt: at, modifiedAt: at, path: parent.path, depth: parent.depth, url: parent.url, canonicalUrl: parent.canonicalUrl };
  });
}

function requireTimes(markup: MarkupRecord, startTime: number | undefined, endTime: number | undefined): void {
  if (endTime !== undefined && startTime === undefined) throw invalid('endTime', 'needs a startTime');
  if (startTime !== undefined && endTime !== undefined && endTime < startTime) throw invalid('endTime', 'must not be before startTime');
  const duration = markup.video?.durationSeconds;
  if (duration !== undefined && startTime !== undefined && startTime > duration) throw invalid('startTime', `must be within the video (${duration} seconds)`);
  if (duration !== undefined && endTime !== undefined && endTime > duration) throw invalid('endTime', `must be within the video (${duration} seconds)`);
}

/**
 * The pin of a new thread, by the markup's type (Resources: Thread). Webpage markups take webpage
 * threads (`isImageThread: false`): the page address, the elements and their parents, the browser
 * context and one of the markup's view modes. Image, PDF and video markups take image threads
 * (`isImageThread: true`) placed by percentage offsets: on one of the images (`projectImageId`,
 * default the first), on a PDF page (`pageNumber`, required), or at a video time (`startTime`).
 */
function pinOf(markup: MarkupRecord, input: CreateThreadInput, at: number): Partial<ThreadRecord> & { kind: ThreadKind } {
  if (markup.type === 'webpage') {
    if (input.isImageThread) throw invalid('isImageThread', 'must be false on a webpage markup (its threads are pinned to page elements)');
    if (!isHttpUrl(input.url)) throw invalid('url', 'must be the absolute http or https address of the page the pin is on');
    if (!VIEW_MODES.some((mode) => mode.id === input.viewModeId)) {
      throw invalid('viewModeId', `must be one of the markup's view modes (GET /markups/${markup.id}/view-modes): ${VIEW_MODES.map((mode) => mode.id).join(', ')}`);
    }
    return {
      kind: 'webpage',
      url: input.url,
      canonicalUrl: input.canonicalUrl,
      elements: elementsOf(input.elements, at),
      parents: parentsOf(input.elementParents, at),
      browserContext: input.browserContext,
      viewModeId: input.viewModeId,
      offsetXPercentage: input.offsetXPercentage,
      offsetYPercentage: input.offsetYPercentage,
    };
  }
  if (!input.isImageThread) throw invalid('isImageThread', `must be true on a ${markup.type} markup (its threads are pinned by offsets)`);
  if (!markup.isReady) throw new ConflictError(`Markup ${markup.id} is still being converted; pin threads once it is ready (isReady).`);
  const common = { offsetXPercentage: input.offsetXPercentage, offsetYPercentage: input.offsetYPercentage, browserContext: input.browserContext };
  switch (markup.type) {
    case 'image': {
      const images = markup.images ?? [];
      if (input.projectImageId !== undefined && !images.some((image) => image.id === input.projectImageId)) {
        throw invalid('projectImageId', `is not an image of markup ${markup.id}`);
      }
      requireTimes(markup, input.startTime, input.endTime);
      return { kind: 'image', ...common, projectImageId: input.projectImageId ?? images[0]?.id ?? null, startTime: input.startTime ?? null, endTime: input.endTime ?? null };
    }
    case 'pdf': {
      if (input.pageNumber === undefined) throw invalid('pageNumber', 'is required on a PDF markup');
      const pageCount = markup.document?.pageCount;
      if (pageCount !== undefined && input.pageNumber > pageCount) throw invalid('pageNumber', `must be between 1 and ${pageCount}, the pages of this PDF`);
      return { kind: 'pdf', ...common, projectImageId: null, pageNumber: input.pageNumber, textHighlight: input.textHighlight ?? null };
    }
    case 'video':
      requireTimes(markup, input.startTime, input.endTime);
      return { kind: 'video', ...common, projectImageId: null, startTime: input.startTime ?? null, endTime: input.endTime ?? null };
  }
}

/** POST /threads: a numbered thread with its first message, written whole or not at all. */
export async function createThread(principal: Principal, input: CreateThreadInput): Promise<Record<string, unknown>> {
  if (!input.projectId) throw invalid('projectId', 'is required with an API key: the id of the markup to comment on');
  const access = await loadMarkupRole(principal, input.projectId, true);
  const { markup } = access;
  requireCommentRole(access.role, 'write');
  requireOpenForComments(markup);
  const at = Date.now();
  const pin = pinOf(markup, input, at);
  const prepared = await prepareMessage(access, { message: input.message, attachments: input.attachments, clipVideos: input.clipVideos }, { at, messageField: '/body/message' });
  if (!prepared.content?.trim() && !prepared.attachments?.length && !prepared.clipVideos?.length) {
    throw invalid('message', 'must say something: a thread opens with a message that has text, attachments or clip videos');
  }

  const number = await nextThreadNumber(markup.id);
  const threadId = randomUUID();
  const messageId = randomUUID();
  const thread: ThreadRecord = {
    id: threadId,
    markupId: markup.id,
    workspaceId: markup.workspaceId,
    organizationId: markup.organizationId,
    number,
    userId: principal.userId,
    createdAt: at,
    modifiedAt: at,
    lastActivityAt: at,
    resolved: false,
    priority: input.priority ?? null,
    revision: 1,
    annotations: input.annotations ?? null,
    width: input.width ?? null,
    height: input.height ?? null,
    ...pin,
  };
  const message = newMessageRecord(markup, { threadId, messageId, userId: principal.userId }, prepared, at, thread.revision);
  const reference = { threadId, markupId: markup.id, workspaceId: markup.workspaceId, organizationId: markup.organizationId };
  const items: TransactItem[] = [
    markupCommentUpdate(markup, { at, activeDelta: 1, open: true }),
    putNew(toThreadItem(thread)),
    putNew(toThreadReferenceItem(reference)),
    putNew(toMessageItem(message)),
    putNew(toMessageReferenceItem({ ...reference, messageId })),
    put(toReadMarkItem(markup.id, readMark(principal.userId, 'thread', threadId, threadId, thread.revision, at))),
    put(toReadMarkItem(markup.id, readMark(principal.userId, 'message', messageId, threadId, message.threadRevision, at))),
    ...(thread.viewModeId ? [viewModeCountUpdate(markup.id, thread.viewModeId, 1)] : []),
    ...prepared.writes,
  ];
  await commit(items, (index) => (index === 0 ? explainMarkupRefusal(markup.id) : explainWriteRefusal()));
  await recordCommentEvent('comment_created', markup, { threadId, messageId });
  const viewer = await viewerFor(principal, access, [principal.userId]);
  return toPublicThread(thread, [message], viewer, readStateOfWriter([message], at));
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

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

/** GET /threads/:id: the thread with its messages and the caller's read state. */
export async function getThread(principal: Principal, threadId: string): Promise<Record<string, unknown>> {
  const access = await loadThreadAccess(principal, threadId, 'read');
  const found = await getThreadWithMessages(access.markup.id, threadId);
  if (!found) throw threadNotFound(threadId);
  const [marks, viewer] = await Promise.all([
    getReadMarksFor(access.markup.id, principal.userId, [threadId, ...found.messages.map((message) => message.id)]),
    viewerFor(principal, access, [found.thread.userId, ...found.messages.map((message) => message.userId)]),
  ]);
  return toPublicThread(found.thread, found.messages, viewer, readStateOf(found.thread, found.messages, indexReadMarks(marks)));
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
 * GET /threads. A markup's threads are a bounded set read whole (one Query of its partition, 1 MB
 * per request, plus the caller's read marks and the page's authors), then filtered, ordered and
 * paged here, which is what lets every filter and order combine and `total` be exact. `cursorId`
 * holds the position of the last thread of a page in the order asked for, so the next page starts
 * right after it even when threads were added or removed in between; `offset` counts from the
 * start. `withThreadOrMessageId` opens the page that holds that thread (or the thread of that
 * message).
 */
export async function listThreads(principal: Principal, input: ListThreadsInput): Promise<Record<string, unknown>> {
  if (input.cursorId !== undefined && input.offset !== undefined) throw new BadRequestError('Pass either cursorId or offset, not both.');
  const access = await loadMarkupRole(principal, input.markupId);
  const [conversation, marks, key] = await Promise.all([getConversation(input.markupId), getReadMarks(input.markupId, principal.userId), getCursorKey()]);
  const entries = selectThreads(access.markup, conversation.threads, conversation.messages, input, input.order);
  const list = listIdOf(input);

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

// ---------------------------------------------------------------------------------------------
// Changes to one thread
// ---------------------------------------------------------------------------------------------

/** The thread record (without messages), or 404. */
export async function loadThreadRecord(markupId: string, threadId: string): Promise<ThreadRecord> {
  const thread = await getThreadRecord(markupId, threadId);
  if (!thread) throw threadNotFound(threadId);
  return thread;
}

/** Replaces a thread record if nobody changed it since it was read (its `revision`). */
export function threadReplace(before: ThreadRecord, after: ThreadRecord): TransactItem {
  return {
    Put: {
      TableName: getConfig().tableName,
      Item: toThreadItem({ ...after, revision: before.revision + 1 }),
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: { ':revision': before.revision },
    },
  };
}

/**
 * Reads a thread, applies `change` and writes it with `extra` items in one transaction, from a
 * fresh read again when a concurrent change got there first. `change` returns undefined when
 * there is nothing to do.
 */
export async function changeThread(
  access: ThreadAccess,
  change: (thread: ThreadRecord) => ThreadRecord | undefined,
  extra: (before: ThreadRecord, after: ThreadRecord) => TransactItem[] = () => [],
): Promise<{ before: ThreadRecord; after: ThreadRecord; changed: boolean }> {
  return fromFreshReads(`Thread ${access.reference.threadId}`, async () => {
    const before = await loadThreadRecord(access.markup.id, access.reference.threadId);
    const next = change(before);
    if (!next) return { before, after: before, changed: false };
    const committed = await commit([threadReplace(before, next), ...extra(before, next)], (index) => (index === 0 ? 'retry' : explainMarkupRefusal(access.markup.id)));
    return committed ? { before, after: { ...next, revision: before.revision + 1 }, changed: true } : STALE;
  });
}

/** POST /threads/:id/resolve: `{ threadId, modifiedAt }`; resolving a resolved thread changes nothing. */
export async function resolveThread(principal: Principal, threadId: string): Promise<{ threadId: string; modifiedAt: number }> {
  const { after, changed, access } = await setResolved(principal, threadId, true);
  if (changed) await recordCommentEvent('comment_resolved', access.markup, { threadId });
  return { threadId, modifiedAt: after.modifiedAt };
}

/** POST /threads/:id/unresolve: `{ threadId }`. */
export async function unresolveThread(principal: Principal, threadId: string): Promise<{ threadId: string }> {
  const { changed, access } = await setResolved(principal, threadId, false);
  if (changed) await recordCommentEvent('comment_unresolved', access.markup, { threadId });
  return { threadId };
}

/** Resolving takes the thread out of the markup's `activeThreads`; unresolving puts it back. */
async function setResolved(principal: Principal, threadId: string, resolved: boolean) {
  const access = await loadThreadAccess(principal, threadId, 'write');
  const result = await changeThread(
    access,
    (thread) => {
      if (thread.resolved === resolved) return undefined;
      const at = nextTime(thread.modifiedAt);
      return { ...thread, resolved, modifiedAt: at, lastActivityAt: at };
    },
    (_before, after) => [markupCommentUpdate(access.markup, { at: after.modifiedAt, activeDelta: resolved ? -1 : 1 })],
  );
  return { ...result, access };
}

/**
 * POST /threads/:id/read: the caller has seen the thread and every message as they are now. The
 * mark records the thread's revision and is written only while the thread is still at it, so a
 * reply or edit that lands meanwhile stays unread (the mark is taken again from a fresh read).
 */
export async function markThreadRead(principal: Principal, threadId: string): Promise<void> {
  const access = await loadThreadAccess(principal, threadId, 'read');
  await fromFreshReads(`Thread ${threadId}`, async () => {
    const thread = await loadThreadRecord(access.markup.id, threadId);
    const mark = readMark(principal.userId, 'thread', threadId, threadId, thread.revision, Date.now());
    return (await commit([threadUnchanged(thread), put(toReadMarkItem(access.markup.id, mark))], () => 'retry')) ? undefined : STALE;
  });
}

/** A transaction item that holds only while the thread is still at the revision that was read. */
export function threadUnchanged(thread: ThreadRecord): TransactItem {
  return {
    ConditionCheck: {
      TableName: getConfig().tableName,
      Key: threadKey(thread.markupId, thread.id),
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: { ':revision': thread.revision },
    },
  };
}

export interface MovePinInput {
  url?: string;
  canonicalUrl?: string;
  elements?: ElementInput[];
  browserContext?: Record<string, unknown>;
  elementParents?: ElementParentInput[];
  viewportXPercentage?: number;
  viewportYPercentage?: number;
}

/**
 * PATCH /threads/:id/move-pin. A webpage pin moves to new elements (and page address, parents,
 * browser context); an image, PDF or video pin to new offsets (`viewportXPercentage`,
 * `viewportYPercentage`). Answers the thread record of the spec.
 */
export async function movePin(principal: Principal, threadId: string, input: MovePinInput): Promise<Record<string, unknown>> {
  const access = await loadThreadAccess(principal, threadId, 'write');
  if (input.url !== undefined && !isHttpUrl(input.url)) throw invalid('url', 'must be an absolute http or https URL');
  const { after, changed } = await changeThread(access, (thread) => {
    const at = nextTime(thread.modifiedAt);
    const moved: ThreadRecord = { ...thread, modifiedAt: at, lastActivityAt: at };
    if (thread.kind === 'webpage') {
      if (input.url === undefined && input.elements === undefined && input.viewportXPercentage === undefined && input.viewportYPercentage === undefined) {
        throw new BadRequestError('Say where the pin goes: elements (with url) or viewportXPercentage and viewportYPercentage.');
      }
      if (input.url !== undefined) moved.url = input.url;
      if (input.canonicalUrl !== undefined) moved.canonicalUrl = input.canonicalUrl;
      if (input.elements !== undefined) moved.elements = elementsOf(input.elements, at);
      if (input.elementParents !== undefined) moved.parents = parentsOf(input.elementParents, at);
      if (input.browserContext !== undefined) moved.browserContext = input.browserContext;
    } else if (input.viewportXPercentage === undefined || input.viewportYPercentage === undefined) {
      throw new BadRequestError(`A ${thread.kind} pin moves by offsets: send viewportXPercentage and viewportYPercentage (0 to 100).`);
    }
    if (input.viewportXPercentage !== undefined) moved.offsetXPercentage = input.viewportXPercentage;
    if (input.viewportYPercentage !== undefined) moved.offsetYPercentage = input.viewportYPercentage;
    return moved;
  });
  if (changed) await recordCommentEvent('comment_updated', access.markup, { threadId });
  return threadRecordOf(after);
}

/**
 * Moves a thread from the revision that was read to the next one, as activity (a new or changed
 * message, the `activity` order) and, with `priority`, a new priority (PATCH /messages/:id). The
 * message written beside it records that next revision as its `threadRevision`. Fails when the
 * thread changed or went away since it was read.
 */
export function threadRevisionUpdate(thread: ThreadRecord, at: number, changes: { priority?: number | null } = {}): TransactItem {
  const priority = changes.priority !== undefined;
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: threadKey(thread.markupId, thread.id),
      UpdateExpression: `SET revision = :next, lastActivityAt = :at${priority ? ', priority = :priority, modifiedAt = :at' : ''}`,
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: { ':revision': thread.revision, ':next': thread.revision + 1, ':at': at, ...(priority ? { ':priority': changes.priority } : {}) },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Deletion (DELETE /threads/:id)
// ---------------------------------------------------------------------------------------------

/**
 * Deletes a thread with all its messages, attachments and screenshot. The thread, its reference,
 * the markup's counters and the storage counters change in one transaction conditioned on the
 * thread's revision (a message added meanwhile makes it read again); the messages follow, and the
 * objects are queued for deletion. Its author (contributor or above) or an admin may delete it.
 */
export async function deleteThread(principal: Principal, threadId: string): Promise<void> {
  const access = await loadThreadAccess(principal, threadId, 'write');
  await fromFreshReads(`Thread ${threadId}`, async () => {
    const found = await getThreadWithMessages(access.markup.id, threadId);
    if (!found) throw threadNotFound(threadId);
    const { thread, messages } = found;
    if (thread.userId !== principal.userId) requireCommentRole(access.role, 'moderate');
    const stored = storedObjectsOf(thread, messages);
    const at = Date.now();
    const items: TransactItem[] = [
      {
        Delete: {
          TableName: getConfig().tableName,
          Key: threadKey(access.markup.id, threadId),
          ConditionExpression: 'revision = :revision',
          ExpressionAttributeValues: { ':revision': thread.revision },
        },
      },
      { Delete: { TableName: getConfig().tableName, Key: threadReferenceKey(threadId) } },
      markupCommentUpdate(access.markup, { at, activeDelta: thread.resolved ? 0 : -1 }),
      ...(thread.viewModeId ? [viewModeCountUpdate(access.markup.id, thread.viewModeId, -1)] : []),
      ...(stored.attachmentBytes + stored.screenshotBytes > 0
        ? [{ Update: storageChange(thread.organizationId, { attachments: -stored.attachmentBytes, images: -stored.screenshotBytes }) }]
        : []),
    ];
    if (!(await commit(items, (index) => (index === 0 ? 'retry' : explainMarkupRefusal(access.markup.id))))) return STALE;
    await batchDelete([
      ...messages.flatMap((message) => [messageKey(access.markup.id, threadId, message.id), messageReferenceKey(message.id)]),
      ...(await readMarkKeysOf(access.markup.id, { threadId })),
    ]);
    await deleteObjectsLater(stored.keys, { threadId });
  });
}
