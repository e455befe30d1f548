import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { markupPartition } from './markup-records.js';
import type { MessageRecord } from './messages.js';
import { queryPrefix } from './core/paging.js';
import { isConditionFailure } from './core/errors.js';
import { recordOf } from './core/table.js';
import { batchGet, putNew, transactUnlessConditionFails, type TransactItem } from './core/transact.js';

/**
 * Threads, their messages (`messages.ts`) and per-user read marks (`read-marks.ts`) live in the
 * markup's own partition (`MARKUP#<markupId>`), so one Query returns a markup's whole conversation,
 * threads each followed by their messages, and a markup's deletion removes it with the rest of that
 * partition. Reference items (`THREAD#<id>`, `MESSAGE#<id>`) find the markup of a thread or message
 * named by id alone. Times are millisecond numbers, as the spec has them for threads and messages.
 */

export type ThreadKind = 'webpage' | 'image' | 'pdf' | 'video';

export interface ThreadElementRecord {
  id: string;
  createdAt: number;
  modifiedAt: number;
  path: string;
  offsetXPercentage: number;
  offsetYPercentage: number;
}

export interface ThreadParentRecord {
  id: string;
  createdAt: number;
  modifiedAt: number;
  path: string;
  depth: number;
  url: string;
  canonicalUrl: string;
}

export type ScreenshotType = 'extension' | 'native' | 'static';

export interface ScreenshotRecord {
  /** The upload the screenshot came from; also the screenshot's id. */
  id: string;
  createdAt: number;
  modifiedAt: number;
  key: string;
  etag: string;
  mimeType: string;
  width: number;
  height: number;
  filesize: number;
  originalFilename?: string;
  type: ScreenshotType;
  /** True until the conversion worker made the thumbnail (or gave up). */
  isProcessing: boolean;
  thumbnailKey?: string;
  /** Why no thumbnail could be made. */
  processingError?: string;
}

/** W3C Web Annotation selectors of a webpage pin's element (CSS, text quote, text position). */
export interface ThreadAnchor {
  css: string;
  textQuote?: { exact: string; prefix?: string; suffix?: string };
  textPosition?: { start: number; end: number };
}

export interface ThreadRecord {
  id: string;
  markupId: string;
  workspaceId: string;
  organizationId: string;
  kind: ThreadKind;
  number: number;
  userId: string;
  createdAt: number;
  modifiedAt: number;
  lastActivityAt: number;
  resolved: boolean;
  priority: number | null;
  /** Moves on every change of the thread or its messages; deletion is conditioned on it. */
  revision: number;
  /**
   * Ids of the thread's messages, oldest first, moved with `revision` when a message is added or
   * deleted: the list page reads the messages of a thread that keeps no copy (`messages`) by key
   * (BatchGet) instead of one Query per thread. Absent on threads created before it (their
   * messages are read by Query).
   */
  messageIds?: string[];
  /**
   * A copy of the thread's messages, oldest first, written in the same transaction as every change
   * of one of them (`threadRevisionUpdate`, conditioned on `revision`), so it is never behind the
   * message items: a page of threads reads its messages with its threads. Absent on a thread whose
   * item would pass `THREAD_ITEM_WITH_COPY_LIMIT` (DynamoDB's items end at 400 KB; its messages are
   * read by `messageIds` then) and on threads written before it until `threads backfill`.
   */
  messages?: MessageRecord[];
  // Webpage threads
  url?: string;
  canonicalUrl?: string;
  elements?: ThreadElementRecord[];
  parents?: ThreadParentRecord[];
  browserContext?: Record<string, unknown>;
  viewModeId?: string;
  /** Extension: the embeddable client's W3C selectors of the pinned element (absent: none sent). */
  anchor?: ThreadAnchor;
  // Image, PDF and video threads
  projectImageId?: string | null;
  offsetXPercentage?: number;
  offsetYPercentage?: number;
  startTime?: number | null;
  endTime?: number | null;
  pageNumber?: number | null;
  textHighlight?: Record<string, unknown> | null;
  annotations?: Record<string, unknown> | null;
  width?: number | null;
  height?: number | null;
  screenshot?: ScreenshotRecord;
}

export interface ThreadReference {
  threadId: string;
  markupId: string;
  workspaceId: string;
  organizationId: string;
}

const THREAD_PREFIX = 'THREAD#';

export const threadKey = (markupId: string, threadId: string) => ({ PK: markupPartition(markupId), SK: `${THREAD_PREFIX}${threadId}` });
export const threadReferenceKey = (threadId: string) => ({ PK: `THREAD#${threadId}`, SK: 'THREAD' });
/** The markup's thread-number counter; only `nextThreadNumber` touches it. */
export const threadSequenceKey = (markupId: string) => ({ PK: markupPartition(markupId), SK: 'THREADSEQ' });

export function toThreadItem(thread: ThreadRecord): Record<string, unknown> {
  return { ...threadKey(thread.markupId, thread.id), entity: 'Thread', ...thread };
}

export function toThreadReferenceItem(reference: ThreadReference): Record<string, unknown> {
  return { ...threadReferenceKey(reference.threadId), entity: 'ThreadReference', ...reference };
}

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

/** Threads with their messages (oldest first), as one markup holds them. */
export interface Conversation {
  threads: ThreadRecord[];
  messages: Map<string, MessageRecord[]>;
}

/** Messages in the order a thread shows them: oldest first, ties by id. */
const byCreation = (a: MessageRecord, b: MessageRecord) => a.createdAt - b.createdAt || a.id.localeCompare(b.id);

function toConversation(items: readonly Record<string, unknown>[]): Conversation {
  const threads: ThreadRecord[] = [];
  const messages = new Map<string, MessageRecord[]>();
  for (const item of items) {
    if (item.entity === 'Thread') threads.push(recordOf<ThreadRecord>(item));
    else if (item.entity === 'Message') {
      const message = recordOf<MessageRecord>(item);
      const list = messages.get(message.threadId) ?? [];
      list.push(message);
      messages.set(message.threadId, list);
    }
  }
  const known = new Set(threads.map((thread) => thread.id));
  for (const [threadId, list] of messages) {
    // Messages left behind by a thread deletion that stopped half-way are not shown.
    if (!known.has(threadId)) messages.delete(threadId);
    else list.sort(byCreation);
  }
  return { threads, messages };
}

/**
 * Every thread of a markup with its messages: one Query over `THREAD#` of the markup's partition,
 * which DynamoDB answers 1 MB at a time, so the request count grows with the bytes, not the threads.
 */
export async function getConversation(markupId: string): Promise<Conversation> {
  return toConversation(await queryPrefix(markupPartition(markupId), THREAD_PREFIX, { consistent: true }));
}

/** One thread with its messages, or undefined. */
export async function getThreadWithMessages(
  markupId: string,
  threadId: string,
): Promise<{ thread: ThreadRecord; messages: MessageRecord[] } | undefined> {
  const conversation = toConversation(await queryPrefix(markupPartition(markupId), `${THREAD_PREFIX}${threadId}`, { consistent: true }));
  const thread = conversation.threads[0];
  return thread ? { thread, messages: conversation.messages.get(thread.id) ?? [] } : undefined;
}

/** Thread records by id, without their messages (one consistent BatchGet per 100); missing ones are left out. */
export async function getThreadRecords(markupId: string, threadIds: readonly string[]): Promise<ThreadRecord[]> {
  return (
    await batchGet(
      threadIds.map((id) => threadKey(markupId, id)),
      { consistent: true },
    )
  ).map((item) => recordOf<ThreadRecord>(item));
}

/**
 * The messages of threads as read (`getThreadRecords`): their copy (`messages`, written in creation order) where they keep one,
 * otherwise by their `messageIds` (one BatchGet per 100), or by a Query for a thread written before them.
 */
export async function getMessagesOf(
  markupId: string,
  threads: readonly ThreadRecord[],
): Promise<Map<string, { thread: ThreadRecord; messages: MessageRecord[] }>> {
  const found = new Map<string, { thread: ThreadRecord; messages: MessageRecord[] }>();
  for (const thread of threads) if (thread.messages !== undefined) found.set(thread.id, { thread, messages: thread.messages });
  const unembedded = threads.filter((thread) => thread.messages === undefined);
  const listed = unembedded.filter((thread) => thread.messageIds !== undefined);
  const [messages, queried] = await Promise.all([
    listed.length === 0
      ? []
      : batchGet(
          listed.flatMap((thread) =>
            thread.messageIds!.map((id) => ({ PK: markupPartition(markupId), SK: `${THREAD_PREFIX}${thread.id}#MSG#${id}` })),
          ),
          { consistent: true },
        ),
    Promise.all(unembedded.filter((thread) => thread.messageIds === undefined).map((thread) => getThreadWithMessages(markupId, thread.id))),
  ]);
  const conversation = toConversation([...listed.map((thread) => toThreadItem(thread)), ...messages]);
  for (const thread of conversation.threads) found.set(thread.id, { thread, messages: conversation.messages.get(thread.id) ?? [] });
  for (const entry of queried) if (entry) found.set(entry.thread.id, entry);
  return found;
}

/** One thread record without its messages (consistent), or undefined. */
export async function getThreadRecord(markupId: string, threadId: string): Promise<ThreadRecord | undefined> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: threadKey(markupId, threadId), ConsistentRead: true }),
  );
  return result.Item ? recordOf<ThreadRecord>(result.Item) : undefined;
}

export async function getThreadReference(threadId: string): Promise<ThreadReference | undefined> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: threadReferenceKey(threadId), ConsistentRead: true }),
  );
  return result.Item ? recordOf<ThreadReference>(result.Item) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Writes. Every change of a thread is conditioned on the `revision` it was read at, so a failed
// condition means "changed since read": the caller reads again or says what happened.
// ---------------------------------------------------------------------------------------------

/**
 * The next thread number of a markup: an atomic counter that no other transaction touches, so
 * concurrent creations never wait on each other for it and never get the same number. A creation
 * that fails after drawing its number leaves a gap, as a deleted thread does; numbers are never reused.
 *
 * The first number (the counter is absent: the markup never had a thread, or its deletion removed
 * the counter) is drawn in one transaction with `firstWrites`: what must hold before any thread of
 * the markup exists (its index state) and their conditions (the markup exists). So a request that
 * dies after drawing 1 leaves them written, and a markup deleted meanwhile gets neither them nor a
 * counter back. Answers undefined when a condition of `firstWrites` failed.
 */
export async function nextThreadNumber(markupId: string, firstWrites: TransactItem[]): Promise<number | undefined> {
  const TableName = getConfig().tableName;
  for (;;) {
    try {
      const result = await getDb().send(
        new UpdateCommand({
          TableName,
          Key: threadSequenceKey(markupId),
          UpdateExpression: 'ADD lastNumber :one',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(result.Attributes?.lastNumber);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const first = { ...threadSequenceKey(markupId), entity: 'ThreadSequence', markupId, lastNumber: 1 };
    const failed = await transactUnlessConditionFails([putNew(first), ...firstWrites]);
    if (failed === undefined) return 1;
    if (failed > 0) return undefined;
    // Another creation drew the first number meanwhile: draw the next one.
  }
}

/** Replaces a thread record with `after` at the next revision, if nobody changed it since it was read (`before.revision`). */
export function threadReplace(before: ThreadRecord, after: ThreadRecord): TransactItem {
  return {
    Put: {
      TableName: getConfig().tableName,
      Item: toThreadItem(withCopyIfItFits({ ...after, revision: before.revision + 1 })),
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: { ':revision': before.revision },
    },
  };
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

/**
 * The most a thread item with its copy of its messages may weigh (UTF-8 bytes of its JSON, which
 * counts attribute names and strings as DynamoDB does and numbers more generously): well under
 * DynamoDB's 400 KB an item, whatever else the thread holds (a webpage thread's elements and
 * parents may take 200 KB themselves). A thread past it keeps no copy.
 */
export const THREAD_ITEM_WITH_COPY_LIMIT = 300 * 1024;

/** Whether `thread` with `messages` as its copy stays under `THREAD_ITEM_WITH_COPY_LIMIT`. */
export function copyFits(thread: ThreadRecord, messages: readonly MessageRecord[]): boolean {
  return Buffer.byteLength(JSON.stringify({ ...thread, messages })) <= THREAD_ITEM_WITH_COPY_LIMIT;
}

/** `thread` as stored: with its copy of its messages only while it fits (a thread that outgrew it keeps its `messageIds`). */
export function withCopyIfItFits(thread: ThreadRecord): ThreadRecord {
  if (thread.messages === undefined || copyFits(thread, thread.messages)) return thread;
  const { messages, ...rest } = thread;
  return { ...rest, messageIds: thread.messageIds ?? messages.map((message) => message.id) };
}

/** One change of a thread's messages: a message written (added or replaced) or deleted. */
export type MessageChange = { put: MessageRecord } | { delete: string };

function applyChange<T>(list: readonly T[], change: MessageChange, idOf: (entry: T) => string, entry: (message: MessageRecord) => T): T[] {
  if ('delete' in change) return list.filter((candidate) => idOf(candidate) !== change.delete);
  const at = list.findIndex((candidate) => idOf(candidate) === change.put.id);
  return at === -1 ? [...list, entry(change.put)] : list.map((candidate, index) => (index === at ? entry(change.put) : candidate));
}

/**
 * The thread's copy after one change, in creation order: a reply that lost its first attempt to
 * another commits after it with the earlier `createdAt` it drew, and the copy still lists it first.
 */
const copyAfter = (messages: readonly MessageRecord[], change: MessageChange) =>
  applyChange(
    messages,
    change,
    (message) => message.id,
    (message) => message,
  ).sort(byCreation);

export interface RevisionChanges {
  priority?: number | null;
  message?: MessageChange;
}

/** The thread as `threadRevisionUpdate` leaves it: what its index items and its page copy are written from. */
export function revisedThread(thread: ThreadRecord, at: number, changes: RevisionChanges = {}): ThreadRecord {
  const after: ThreadRecord = {
    ...thread,
    revision: thread.revision + 1,
    lastActivityAt: at,
    ...(changes.priority !== undefined ? { priority: changes.priority, modifiedAt: at } : {}),
  };
  const change = changes.message;
  if (change && thread.messages !== undefined) {
    const messages = copyAfter(thread.messages, change);
    after.messageIds = messages.map((message) => message.id);
    // Measured on the thread as written: its page copy is that record, and must keep or drop the same copy.
    if (copyFits(after, messages)) after.messages = messages;
    else delete after.messages;
  } else if (change && thread.messageIds !== undefined) {
    after.messageIds = applyChange(
      thread.messageIds,
      change,
      (id) => id,
      (message) => message.id,
    );
  }
  return after;
}

/**
 * Moves a thread from the revision that was read to the next one, as activity (a new or changed
 * message, the `activity` order) and, with `priority`, a new priority (PATCH /messages/:id). With
 * `message`, the change of one message also changes the thread's `messageIds` and its copy of its
 * messages (`messages`; dropped when it would no longer fit). The message written beside it records
 * that next revision as its `threadRevision`. Fails when the thread changed or went away since it
 * was read.
 */
export function threadRevisionUpdate(thread: ThreadRecord, at: number, changes: RevisionChanges = {}): TransactItem {
  const after = revisedThread(thread, at, changes);
  const priority = changes.priority !== undefined;
  const sets = ['revision = :next', 'lastActivityAt = :at', ...(priority ? ['priority = :priority', 'modifiedAt = :at'] : [])];
  const removes: string[] = [];
  const values: Record<string, unknown> = { ':revision': thread.revision, ':next': after.revision, ':at': at };
  if (priority) values[':priority'] = changes.priority;
  if (changes.message && (thread.messages !== undefined || thread.messageIds !== undefined)) {
    sets.push('messageIds = :ids');
    values[':ids'] = after.messageIds;
  }
  if (changes.message && thread.messages !== undefined) {
    if (after.messages !== undefined) {
      sets.push('messages = :messages');
      values[':messages'] = after.messages;
    } else removes.push('messages');
  }
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: threadKey(thread.markupId, thread.id),
      UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Sets a thread's copy of its messages (and `messageIds`) to its messages as read, while it is still
 * at the revision read: `threads backfill`, for a thread written before the copy, or whose copy an
 * older release left behind its messages. Answers false when the thread changed or went away
 * meanwhile; a thread whose messages do not fit keeps no copy (`messageIds` only).
 */
export async function embedMessages(
  thread: ThreadRecord,
  messages: readonly MessageRecord[],
  also: (embedded: ThreadRecord) => TransactItem[] = () => [],
): Promise<boolean> {
  const sorted = [...messages].sort(byCreation);
  const { messages: _old, ...rest } = thread;
  const listed: ThreadRecord = { ...rest, messageIds: sorted.map((message) => message.id) };
  const fit = copyFits(listed, sorted);
  const embedded: ThreadRecord = { ...listed, ...(fit ? { messages: sorted } : {}) };
  const failed = await transactUnlessConditionFails([
    {
      Update: {
        TableName: getConfig().tableName,
        Key: threadKey(thread.markupId, thread.id),
        UpdateExpression: `SET messageIds = :ids${fit ? ', messages = :messages' : ' REMOVE messages'}`,
        ConditionExpression: 'revision = :revision',
        ExpressionAttributeValues: {
          ':revision': thread.revision,
          ':ids': embedded.messageIds,
          ...(fit ? { ':messages': sorted } : {}),
        },
      },
    },
    ...also(embedded),
  ]);
  return failed === undefined;
}

/**
 * Whether a thread's copy is its messages as the message items hold them (the same messages, in creation order, each
 * at the same change), or it rightly keeps none (they do not fit, and `messageIds` lists them):
 * what the backfill leaves alone.
 */
export function copyIsCurrent(thread: ThreadRecord, messages: readonly MessageRecord[]): boolean {
  const sorted = [...messages].sort(byCreation);
  const ids = sorted.map((message) => message.id);
  if (thread.messages === undefined) return !copyFits(thread, sorted) && sameList(thread.messageIds ?? [], ids);
  const changeOf = (message: MessageRecord) => `${message.id}@${message.threadRevision}@${message.modifiedAt}@${message.modifiedBy}`;
  return sameList(thread.messages.map(changeOf), sorted.map(changeOf)) && sameList(thread.messageIds ?? [], ids);
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((entry, index) => entry === b[index]);

/**
 * Deletes a thread record and its reference, the record only while it is at the revision that was
 * read (a message added meanwhile fails it). The thread's item comes first, so a failure at index
 * 0 of the transaction means "changed since read".
 */
export function threadDelete(thread: ThreadRecord): [TransactItem, TransactItem] {
  return [
    {
      Delete: {
        TableName: getConfig().tableName,
        Key: threadKey(thread.markupId, thread.id),
        ConditionExpression: 'revision = :revision',
        ExpressionAttributeValues: { ':revision': thread.revision },
      },
    },
    { Delete: { TableName: getConfig().tableName, Key: threadReferenceKey(thread.id) } },
  ];
}

// ---------------------------------------------------------------------------------------------
// Stored objects
// ---------------------------------------------------------------------------------------------

/** What a thread stores in the bucket: message attachments, the screenshot and its thumbnail, with their counted bytes. */
export function storedObjectsOf(
  thread: ThreadRecord,
  messages: readonly MessageRecord[],
): { keys: string[]; attachmentBytes: number; screenshotBytes: number } {
  const attachments = messages.flatMap((message) => message.attachments);
  const screenshot = thread.screenshot;
  return {
    keys: [...attachments.map((attachment) => attachment.key), ...(screenshot ? screenshotKeysOf(screenshot) : [])],
    attachmentBytes: attachments.reduce((sum, attachment) => sum + attachment.filesize, 0),
    screenshotBytes: screenshot?.filesize ?? 0,
  };
}

/** The objects a screenshot stored: its file and, once made, its thumbnail. */
export function screenshotKeysOf(screenshot: ScreenshotRecord): string[] {
  return [screenshot.key, ...(screenshot.thumbnailKey ? [screenshot.thumbnailKey] : [])];
}
