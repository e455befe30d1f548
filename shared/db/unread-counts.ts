import { getConfig } from '../config.js';
import { markupPartition } from './markup-records.js';
import { threadIndexStateKey } from './thread-index.js';
import { batchGet, updateIfConditionHolds, type TransactItem } from './core/transact.js';

/**
 * One user's count of unread threads on one markup, kept beside the conversation
 * (`MARKUP#<markupId>` / `UNREAD#<userId>`) so a listing of markups reads every count it shows
 * with one BatchGetItem per 50 markups instead of the conversations.
 *
 * The count is a cache, labelled with what it was computed from, never moved by the writes:
 * - `asOfWrites`: the markup's `THREADINDEX.writes` when it was computed. Every thread and message
 *   write (create, reply, edit, delete, resolve, move) moves `writes` in its transaction, so a
 *   label that differs from the current `writes` means the conversation changed: computed again.
 * - `readSeq`: moved (`ADD 1`, removing the count) in the transaction of every read mark the user
 *   writes outside a thread write (POST /threads/:id/read, POST /messages/:id/read), so a count
 *   computed before a mark is never stored after it (its store is conditioned on `readSeq` as
 *   read before the conversation was).
 * A thread write's own read marks (the writer's) move `writes`, so they need no `readSeq`.
 */
const unreadPrefix = 'UNREAD#';
export const unreadCountKey = (markupId: string, userId: string) => ({ PK: markupPartition(markupId), SK: `${unreadPrefix}${userId}` });

/** What a listing knows of one markup before counting: the conversation's `writes` and the user's cached count. */
export interface UnreadCountState {
  markupId: string;
  /** `THREADINDEX.writes` (0 when the markup never had a thread write). */
  writes: number;
  /** `THREADINDEX.layout` (undefined: the markup was written before the index). */
  layout: number | undefined;
  /** The user's `readSeq` on this markup (0 when never moved). */
  readSeq: number;
  /** The cached count, when it was computed at `writes` and no read mark came since. */
  cached?: number;
}

/** Each markup's `THREADINDEX` and the user's `UNREAD#` item: one consistent BatchGetItem per 50 markups. */
export async function getUnreadCountStates(markupIds: readonly string[], userId: string): Promise<UnreadCountState[]> {
  const keys = markupIds.flatMap((markupId) => [threadIndexStateKey(markupId), unreadCountKey(markupId, userId)]);
  const items = new Map((await batchGet(keys, { consistent: true })).map((item) => [`${String(item.PK)}\u0000${String(item.SK)}`, item]));
  const itemAt = (key: { PK: string; SK: string }) => items.get(`${key.PK}\u0000${key.SK}`);
  return markupIds.map((markupId) => {
    const index = itemAt(threadIndexStateKey(markupId));
    const writes = Number(index?.writes ?? 0);
    const layout = index?.layout === undefined ? undefined : Number(index.layout);
    const unread = itemAt(unreadCountKey(markupId, userId));
    const readSeq = Number(unread?.readSeq ?? 0);
    const current = unread?.count !== undefined && Number(unread.asOfWrites) === writes;
    return { markupId, writes, layout, readSeq, ...(current ? { cached: Number(unread.count) } : {}) };
  });
}

/**
 * Stores a count computed from reads made after `state` was read; skipped (false) when a read mark
 * of the user moved `readSeq` meanwhile, as the count may predate it.
 */
export function storeUnreadCount(state: UnreadCountState, userId: string, count: number): Promise<boolean> {
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: unreadCountKey(state.markupId, userId),
    UpdateExpression: 'SET entity = :entity, markupId = :markupId, userId = :userId, #count = :count, asOfWrites = :writes',
    ConditionExpression: state.readSeq === 0 ? 'attribute_not_exists(readSeq) OR readSeq = :readSeq' : 'readSeq = :readSeq',
    ExpressionAttributeNames: { '#count': 'count' },
    ExpressionAttributeValues: {
      ':entity': 'UnreadCount',
      ':markupId': state.markupId,
      ':userId': userId,
      ':count': count,
      ':writes': state.writes,
      ':readSeq': state.readSeq,
    },
  });
}

/** In the transaction of a read mark the user writes: the cached count is stale, and so is any count being computed. */
export function unreadCountInvalidation(markupId: string, userId: string): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: unreadCountKey(markupId, userId),
      UpdateExpression: 'SET entity = :entity, markupId = :markupId, userId = :userId ADD readSeq :one REMOVE #count, asOfWrites',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':entity': 'UnreadCount', ':markupId': markupId, ':userId': userId, ':one': 1 },
    },
  };
}
