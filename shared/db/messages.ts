import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { recordOf } from './core/table.js';
import { threadKey, type ThreadReference } from './threads.js';
import type { TransactItem } from './core/transact.js';

/**
 * A thread's messages sort right after the thread in the markup's partition
 * (`THREAD#<threadId>#MSG#<messageId>`), so the thread's Query reads them with it. A message's
 * reference item (`MESSAGE#<id>`) finds its markup and thread from the id alone. Writes are
 * conditioned on what was read (`modifiedAt`, `threadRevision`): a failed condition means "changed
 * since read".
 */

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

export interface MessageReference extends ThreadReference {
  messageId: string;
}

const MESSAGE_INFIX = '#MSG#';

export const messageKey = (markupId: string, threadId: string, messageId: string) => {
  const thread = threadKey(markupId, threadId);
  return { PK: thread.PK, SK: `${thread.SK}${MESSAGE_INFIX}${messageId}` };
};
export const messageReferenceKey = (messageId: string) => ({ PK: `MESSAGE#${messageId}`, SK: 'MESSAGE' });

export function toMessageItem(message: MessageRecord): Record<string, unknown> {
  return { ...messageKey(message.markupId, message.threadId, message.id), entity: 'Message', ...message };
}

export function toMessageReferenceItem(reference: MessageReference): Record<string, unknown> {
  return { ...messageReferenceKey(reference.messageId), entity: 'MessageReference', ...reference };
}

export async function getMessageReference(messageId: string): Promise<MessageReference | undefined> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: messageReferenceKey(messageId), ConsistentRead: true }),
  );
  return result.Item ? recordOf<MessageReference>(result.Item) : undefined;
}

export async function getMessage(reference: MessageReference): Promise<MessageRecord | undefined> {
  const result = await getDb().send(
    new GetCommand({
      TableName: getConfig().tableName,
      Key: messageKey(reference.markupId, reference.threadId, reference.messageId),
      ConsistentRead: true,
    }),
  );
  return result.Item ? recordOf<MessageRecord>(result.Item) : undefined;
}

/**
 * Replaces a message with `next` if nobody changed it since `current` was read (its `modifiedAt`;
 * with `guardVersion`, an `If-Match`, also its `threadRevision`, the message's version in ETags).
 */
export function messageReplace(current: MessageRecord, next: MessageRecord, options: { guardVersion?: boolean } = {}): TransactItem {
  return {
    Put: {
      TableName: getConfig().tableName,
      Item: toMessageItem(next),
      ConditionExpression: `modifiedAt = :modifiedAt${options.guardVersion ? ' AND threadRevision = :version' : ''}`,
      ExpressionAttributeValues: {
        ':modifiedAt': current.modifiedAt,
        ...(options.guardVersion ? { ':version': current.threadRevision } : {}),
      },
    },
  };
}

/**
 * Deletes a message and its reference, the message only while it is as it was read (its
 * `modifiedAt`). The message's item comes first, so a failure at its index means "changed since read".
 */
export function messageDelete(message: MessageRecord, options: { guardVersion?: boolean } = {}): [TransactItem, TransactItem] {
  return [
    {
      Delete: {
        TableName: getConfig().tableName,
        Key: messageKey(message.markupId, message.threadId, message.id),
        ConditionExpression: `modifiedAt = :modifiedAt${options.guardVersion ? ' AND threadRevision = :version' : ''}`,
        ExpressionAttributeValues: {
          ':modifiedAt': message.modifiedAt,
          ...(options.guardVersion ? { ':version': message.threadRevision } : {}),
        },
      },
    },
    { Delete: { TableName: getConfig().tableName, Key: messageReferenceKey(message.id) } },
  ];
}

/** A transaction item that holds only while the message is still at the thread revision its last change made. */
export function messageUnchanged(message: MessageRecord): TransactItem {
  return {
    ConditionCheck: {
      TableName: getConfig().tableName,
      Key: messageKey(message.markupId, message.threadId, message.id),
      ConditionExpression: 'threadRevision = :revision',
      ExpressionAttributeValues: { ':revision': message.threadRevision },
    },
  };
}
