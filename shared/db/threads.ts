import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { markupPartition } from './markup-records.js';
import { queryPrefix } from './paging.js';
import { batchGet } from './transact.js';

/**
 * Threads, their messages and per-user read marks live in the markup's own partition
 * (`MARKUP#<markupId>`), so one Query returns a markup's whole conversation, threads each followed
 * by their messages, and a markup's deletion removes it with the rest of that partition. Reference
 * items (`THREAD#<id>`, `MESSAGE#<id>`) find the markup of a thread or message named by id alone.
 * Times are millisecond numbers, as the spec has them for threads and messages.
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
  // Webpage threads
  url?: string;
  canonicalUrl?: string;
  elements?: ThreadElementRecord[];
  parents?: ThreadParentRecord[];
  browserContext?: Record<string, unknown>;
  viewModeId?: string;
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

export interface AttachmentRecord {
  /** The id of the upload it came from. */
  id: string;
  createdAt: number;
  modifiedAt: number;
  key: string;
  etag: string;
  mimeType: string;
  originalFilename: string;
  filesize: number;
}

export interface ClipVideoRecord {
  id: string;
  createdAt: number;
  modifiedAt: number;
  title: string;
  sharedUrl: string;
  width: number;
  height: number;
}

/** A Quill Delta document: `{ ops: [{ insert, attributes? }] }`. */
export interface Delta {
  ops: { insert: string | Record<string, unknown>; attributes?: Record<string, unknown> }[];
}

export interface MessageRecord {
  id: string;
  threadId: string;
  markupId: string;
  workspaceId: string;
  organizationId: string;
  userId: string;
  createdAt: number;
  /** Last change of what the message says. */
  modifiedAt: number;
  modifiedBy: string;
  /**
   * The thread's `revision` that this message's last change made. Read state compares revisions,
   * not clocks: a reader has read the message when they marked it, or its thread, at this
   * revision or a later one.
   */
  threadRevision: number;
  content: string;
  delta: Delta;
  mentionIds: string[];
  attachments: AttachmentRecord[];
  clipVideos: ClipVideoRecord[];
}

/** When one user last saw a thread (marked it read) or one message. */
export interface ReadMark {
  userId: string;
  subject: 'thread' | 'message';
  /** The thread or message id. */
  subjectId: string;
  threadId: string;
  /** The thread's revision the mark covers: a thread mark, the thread's; a message mark, the message's `threadRevision`. */
  seenRevision: number;
  /** When it was marked (`userMetaData.lastSeenAt`). */
  seenAt: number;
}

export interface ThreadReference {
  threadId: string;
  markupId: string;
  workspaceId: string;
  organizationId: string;
}

export interface MessageReference extends ThreadReference {
  messageId: string;
}

const THREAD_PREFIX = 'THREAD#';
const MESSAGE_INFIX = '#MSG#';

export const threadKey = (markupId: string, threadId: string) => ({ PK: markupPartition(markupId), SK: `${THREAD_PREFIX}${threadId}` });
export const messageKey = (markupId: string, threadId: string, messageId: string) => ({
  PK: markupPartition(markupId),
  SK: `${THREAD_PREFIX}${threadId}${MESSAGE_INFIX}${messageId}`,
});
export const threadReferenceKey = (threadId: string) => ({ PK: `THREAD#${threadId}`, SK: 'THREAD' });
export const messageReferenceKey = (messageId: string) => ({ PK: `MESSAGE#${messageId}`, SK: 'MESSAGE' });
/** The markup's thread-number counter; only `nextThreadNumber` touches it. */
export const threadSequenceKey = (markupId: string) => ({ PK: markupPartition(markupId), SK: 'THREADSEQ' });
const readMarkPrefix = (userId: string) => `READ#${userId}#`;
export const readMarkKey = (markupId: string, userId: string, subjectId: string) => ({
  PK: markupPartition(markupId),
  SK: `${readMarkPrefix(userId)}${subjectId}`,
});

export function toThreadItem(thread: ThreadRecord): Record<string, unknown> {
  return { ...threadKey(thread.markupId, thread.id), entity: 'Thread', ...thread };
}

export function toMessageItem(message: MessageRecord): Record<string, unknown> {
  return { ...messageKey(message.markupId, message.threadId, message.id), entity: 'Message', ...message };
}

export function toThreadReferenceItem(reference: ThreadReference): Record<string, unknown> {
  return { ...threadReferenceKey(reference.threadId), entity: 'ThreadReference', ...reference };
}

export function toMessageReferenceItem(reference: MessageReference): Record<string, unknown> {
  return { ...messageReferenceKey(reference.messageId), entity: 'MessageReference', ...reference };
}

export function toReadMarkItem(markupId: string, mark: ReadMark): Record<string, unknown> {
  return { ...readMarkKey(markupId, mark.userId, mark.subjectId), entity: 'ReadMark', markupId, ...mark };
}

const INTERNAL = new Set(['PK', 'SK', 'entity']);
const strip = <T>(item: Record<string, unknown>): T => Object.fromEntries(Object.entries(item).filter(([name]) => !INTERNAL.has(name))) as T;

/** Threads with their messages (oldest first), as one markup holds them. */
export interface Conversation {
  threads: ThreadRecord[];
  messages: Map<string, MessageRecord[]>;
}

function toConversation(items: readonly Record<string, unknown>[]): Conversation {
  const threads: ThreadRecord[] = [];
  const messages = new Map<string, MessageRecord[]>();
  for (const item of items) {
    if (item.entity === 'Thread') threads.push(strip<ThreadRecord>(item));
    else if (item.entity === 'Message') {
      const message = strip<MessageRecord>(item);
      const list = messages.get(message.threadId) ?? [];
      list.push(message);
      messages.set(message.threadId, list);
    }
  }
  const known = new Set(threads.map((thread) => thread.id));
  for (const [threadId, list] of messages) {
    // Messages left behind by a thread deletion that stopped half-way are not shown.
    if (!known.has(threadId)) messages.delete(threadId);
    else list.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
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
export async function getThreadWithMessages(markupId: string, threadId: string): Promise<{ thread: ThreadRecord; messages: MessageRecord[] } | undefined> {
  const conversation = toConversation(await queryPrefix(markupPartition(markupId), `${THREAD_PREFIX}${threadId}`, { consistent: true }));
  const thread = conversation.threads[0];
  return thread ? { thread, messages: conversation.messages.get(thread.id) ?? [] } : undefined;
}

/** One thread record without its messages (consistent), or undefined. */
export async function getThreadRecord(markupId: string, threadId: string): Promise<ThreadRecord | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: threadKey(markupId, threadId), ConsistentRead: true }));
  return result.Item ? strip<ThreadRecord>(result.Item) : undefined;
}

export async function getThreadReference(threadId: string): Promise<ThreadReference | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: threadReferenceKey(threadId), ConsistentRead: true }));
  return result.Item ? strip<ThreadReference>(result.Item) : undefined;
}

export async function getMessageReference(messageId: string): Promise<MessageReference | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: messageReferenceKey(messageId), ConsistentRead: true }));
  return result.Item ? strip<MessageReference>(result.Item) : undefined;
}

export async function getMessage(reference: MessageReference): Promise<MessageRecord | undefined> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: messageKey(reference.markupId, reference.threadId, reference.messageId), ConsistentRead: true }),
  );
  return result.Item ? strip<MessageRecord>(result.Item) : undefined;
}

/** Every read mark one user holds on a markup's threads and messages (one Query). */
export async function getReadMarks(markupId: string, userId: string): Promise<ReadMark[]> {
  return (await queryPrefix(markupPartition(markupId), readMarkPrefix(userId), { consistent: true })).map((item) => strip<ReadMark>(item));
}

/** One user's read marks on the given threads and messages of a markup (BatchGet). */
export async function getReadMarksFor(markupId: string, userId: string, subjectIds: readonly string[]): Promise<ReadMark[]> {
  return (await batchGet(subjectIds.map((subjectId) => readMarkKey(markupId, userId, subjectId)), { consistent: true })).map((item) => strip<ReadMark>(item));
}

/**
 * Keys of every user's read marks on one thread and its messages, or on one message: what a
 * deletion leaves behind. Marks are keyed by user first (the list reads one user's marks in one
 * Query), so this reads all marks of the markup and keeps the matching ones; deletions are rare.
 */
export async function readMarkKeysOf(markupId: string, subject: { threadId: string } | { messageId: string }): Promise<Record<string, string>[]> {
  const [attribute, id] = 'threadId' in subject ? ['threadId', subject.threadId] : ['subjectId', subject.messageId];
  const marks = await queryPrefix(markupPartition(markupId), 'READ#', { filter: { expression: '#subject = :subject', names: { '#subject': attribute }, values: { ':subject': id } } });
  return marks.map((mark) => ({ PK: mark.PK as string, SK: mark.SK as string }));
}

/**
 * The next thread number of a markup: an atomic counter that no transaction touches, so concurrent
 * creations never wait on each other for it and never get the same number. A creation that fails
 * after drawing its number leaves a gap, as a deleted thread does; numbers are never reused.
 */
export async function nextThreadNumber(markupId: string): Promise<number> {
  const result = await getDb().send(
    new UpdateCommand({
      TableName: getConfig().tableName,
      Key: threadSequenceKey(markupId),
      UpdateExpression: 'ADD lastNumber :one SET entity = :entity, markupId = :markup',
      ExpressionAttributeValues: { ':one': 1, ':entity': 'ThreadSequence', ':markup': markupId },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(result.Attributes?.lastNumber);
}

/** What a thread stores in the bucket: message attachments, the screenshot and its thumbnail, with their counted bytes. */
export function storedObjectsOf(thread: ThreadRecord, messages: readonly MessageRecord[]): { keys: string[]; attachmentBytes: number; screenshotBytes: number } {
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
