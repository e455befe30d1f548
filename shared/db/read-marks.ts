import { getConfig } from '../config.js';
import { markupPartition } from './markup-records.js';
import { isTimeOrderedId } from './core/ids.js';
import { queryBetween, queryPrefix } from './core/paging.js';
import { batchDelete, batchGet, transactUnlessConditionFails, updateIfConditionHolds, type TransactItem } from './core/transact.js';
import { threadKey, type ThreadRecord } from './threads.js';

/**
 * Read marks: what one user has seen of one markup's threads, in the markup's partition, one item
 * per (user, thread) keyed by user first (`READ#<userId>#<threadId>`), so
 * - a page of threads reads the caller's state of its threads beside the threads' own BatchGet (it
 *   needs only their ids and numbers): one Query of the range their items span when the threads were
 *   created one after another (thread ids are time-ordered, `getReadMarksOfPage`), else one BatchGet
 *   of one key per thread;
 * - one user's marks on a whole markup are one Query (`READ#<userId>#`, the unread counts).
 *
 * The item holds the thread's mark in the attributes a thread mark always had (`seenRevision`,
 * `seenAt`, `subject: 'thread'`; absent until the thread itself is marked) and each message's mark
 * as an attribute of its own, `m:<messageId>` = `{ seenRevision, seenAt }`. Every mark is written
 * by an UpdateItem of the attributes it sets, never a Put, so marking the thread keeps the message
 * marks and the reverse.
 *
 * Migration. Before layout 3 of the thread index (`thread-index.ts`), a message's mark was an item
 * of its own (`READ#<userId>#<messageId>`, `subject: 'message'`). Readers of one thread or message
 * still read those keys too (`getReadMarksOf`'s `legacyMessageIds`), and so does a page of a markup
 * not yet at layout 3; `threads backfill` folds them into the thread's item (`foldLegacyReadMarks`)
 * before it moves the markup to layout 3.
 */

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

const readMarkPrefix = (userId: string) => `READ#${userId}#`;
const MESSAGE_MARK = 'm:';
/** The item of one user's marks on one thread (and, before layout 3, of one message's mark: `subjectId` a message id). */
export const readMarkKey = (markupId: string, userId: string, subjectId: string) => ({
  PK: markupPartition(markupId),
  SK: `${readMarkPrefix(userId)}${subjectId}`,
});

/** A mark as stored: its revision and time, as numbers whatever the item held. */
const storedMark = (
  of: Pick<ReadMark, 'userId' | 'subject' | 'subjectId' | 'threadId'>,
  stored: { seenRevision?: unknown; seenAt?: unknown },
): ReadMark => ({ ...of, seenRevision: Number(stored.seenRevision), seenAt: Number(stored.seenAt) });

/** The marks one stored item holds: a legacy message mark, or a thread's item with its thread mark and message marks. */
function marksOf(item: Record<string, unknown>): ReadMark[] {
  const userId = item.userId as string;
  const threadId = item.threadId as string;
  if (item.subject === 'message') return [storedMark({ userId, subject: 'message', subjectId: item.subjectId as string, threadId }, item)];
  const marks: ReadMark[] = [];
  if (item.seenRevision !== undefined) marks.push(storedMark({ userId, subject: 'thread', subjectId: threadId, threadId }, item));
  for (const [name, value] of Object.entries(item)) {
    if (!name.startsWith(MESSAGE_MARK)) continue;
    marks.push(storedMark({ userId, subject: 'message', subjectId: name.slice(MESSAGE_MARK.length), threadId }, value as object));
  }
  return marks;
}

/**
 * The items that hold `marks` (one per user and thread), as the writes leave them: for seeding a
 * table straight (tests, the bench) and for the backfill's checks.
 */
export function toReadMarkItems(markupId: string, marks: readonly ReadMark[]): Record<string, unknown>[] {
  const items = new Map<string, Record<string, unknown>>();
  for (const mark of marks) {
    const key = readMarkKey(markupId, mark.userId, mark.threadId);
    const item = items.get(key.SK) ?? { ...key, entity: 'ReadMark', markupId, userId: mark.userId, threadId: mark.threadId };
    if (mark.subject === 'thread')
      Object.assign(item, { subject: 'thread', subjectId: mark.threadId, seenRevision: mark.seenRevision, seenAt: mark.seenAt });
    else item[`${MESSAGE_MARK}${mark.subjectId}`] = { seenRevision: mark.seenRevision, seenAt: mark.seenAt };
    items.set(key.SK, item);
  }
  return [...items.values()];
}

/**
 * A transaction item that writes one user's marks on one thread: the thread's, messages' or both
 * (one item holds them, so one Update of it; a transaction may name an item once).
 */
export function readMarksUpdate(markupId: string, marks: readonly ReadMark[]): TransactItem {
  const first = marks[0];
  if (!first || marks.some((mark) => mark.userId !== first.userId || mark.threadId !== first.threadId))
    throw new Error('readMarksUpdate: marks of one user on one thread');
  const sets = ['entity = :entity', 'markupId = :markupId', 'userId = :userId', 'threadId = :threadId'];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {
    ':entity': 'ReadMark',
    ':markupId': markupId,
    ':userId': first.userId,
    ':threadId': first.threadId,
  };
  marks.forEach((mark, index) => {
    if (mark.subject === 'thread') {
      sets.push('subject = :subject', 'subjectId = :threadId', 'seenRevision = :threadRevision', 'seenAt = :threadSeenAt');
      Object.assign(values, { ':subject': 'thread', ':threadRevision': mark.seenRevision, ':threadSeenAt': mark.seenAt });
    } else {
      sets.push(`#m${index} = :m${index}`);
      names[`#m${index}`] = `${MESSAGE_MARK}${mark.subjectId}`;
      values[`:m${index}`] = { seenRevision: mark.seenRevision, seenAt: mark.seenAt };
    }
  });
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: readMarkKey(markupId, first.userId, first.threadId),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * One mark a subject: on a markup not yet folded, a message may have a legacy item and an
 * attribute mark both (an old mark, then a new one written after the upgrade); the later one, by
 * revision and then time, is what the user has seen.
 */
export function latestOf(marks: readonly ReadMark[]): ReadMark[] {
  const latest = new Map<string, ReadMark>();
  for (const mark of marks) {
    const key = `${mark.subject}#${mark.subjectId}`;
    const known = latest.get(key);
    if (!known || mark.seenRevision > known.seenRevision || (mark.seenRevision === known.seenRevision && mark.seenAt > known.seenAt))
      latest.set(key, mark);
  }
  return [...latest.values()];
}

/** Every read mark one user holds on a markup's threads and messages (one Query). */
export async function getReadMarks(markupId: string, userId: string): Promise<ReadMark[]> {
  return latestOf((await queryPrefix(markupPartition(markupId), readMarkPrefix(userId), { consistent: true })).flatMap(marksOf));
}

/**
 * One user's read marks on the given threads and their messages: one key per thread (a
 * consistent BatchGet per 100), plus the legacy item of each of `legacyMessageIds` (marks written
 * before layout 3, see above).
 */
export async function getReadMarksOf(
  markupId: string,
  userId: string,
  threadIds: readonly string[],
  legacyMessageIds: readonly string[] = [],
): Promise<ReadMark[]> {
  const ids = [...new Set([...threadIds, ...legacyMessageIds])];
  if (ids.length === 0) return [];
  return latestOf(
    (
      await batchGet(
        ids.map((id) => readMarkKey(markupId, userId, id)),
        { consistent: true },
      )
    ).flatMap(marksOf),
  );
}

/**
 * One user's marks on a page of threads of a markup at layout 3 (one item a thread, `thread-index.ts`):
 * one Query of the key range their items span when it holds little else, otherwise
 * `getReadMarksOf`'s BatchGet of a key a thread. Thread ids are time-ordered (`timeOrderedId`), so
 * the items of threads created one after another sit side by side, as those of a page in pin order
 * do; whether a range holds little else shows in the threads' numbers, drawn in creation order: the
 * Query is used when the page's numbers span at most twice the page, and reads at most twice the
 * page's items; what it did not reach is read by key. Threads from before time-ordered ids (random
 * UUIDs) are read by key. On DynamoDB a Query of 50 marks costs about 2 read units where the
 * BatchGet costs 50 (one a key), and on DynamoDB Local a third of the time.
 */
export async function getReadMarksOfPage(
  markupId: string,
  userId: string,
  threads: readonly Pick<ThreadRecord, 'id' | 'number'>[],
): Promise<ReadMark[]> {
  const ids = threads.map((thread) => thread.id);
  const numbers = threads.map((thread) => thread.number);
  const inRange = threads.length > 1 && ids.every(isTimeOrderedId) && Math.max(...numbers) - Math.min(...numbers) < 2 * threads.length;
  if (!inRange) return getReadMarksOf(markupId, userId, ids);
  const keys = new Map(ids.map((id) => [readMarkKey(markupId, userId, id).SK, id]));
  const sorted = [...keys.keys()].sort();
  const range = await queryBetween(markupPartition(markupId), sorted[0]!, sorted.at(-1)!, 2 * threads.length);
  const found = range.items.filter((item) => keys.has(item.SK as string));
  const unread = range.last === undefined ? [] : sorted.filter((key) => key > range.last!).map((key) => keys.get(key)!);
  return latestOf([...found.flatMap(marksOf), ...(unread.length > 0 ? await getReadMarksOf(markupId, userId, unread) : [])]);
}

const keyOf = (item: Record<string, unknown>) => ({ PK: item.PK as string, SK: item.SK as string });

/** Every user's mark items on a markup's threads (the thread's items and legacy message items), for a scan of the whole markup. */
function markItemsOf(markupId: string, filter?: { threadId: string }) {
  return queryPrefix(markupPartition(markupId), 'READ#', {
    consistent: true,
    ...(filter ? { filter: { expression: 'threadId = :thread', values: { ':thread': filter.threadId } } } : {}),
  });
}

/**
 * Keys of every user's read marks on one thread and its messages: what the thread's deletion
 * leaves behind. Items are keyed by user first (a page reads one user's), so this reads every mark
 * of the markup and keeps the thread's; deletions are rare.
 */
export async function readMarkKeysOf(markupId: string, threadId: string): Promise<Record<string, string>[]> {
  return (await markItemsOf(markupId, { threadId })).map(keyOf);
}

/** Takes every user's mark of one deleted message away: the attribute on each thread's item, and a legacy item. */
export async function removeMessageMarks(markupId: string, threadId: string, messageId: string): Promise<void> {
  const items = await markItemsOf(markupId, { threadId });
  const name = `${MESSAGE_MARK}${messageId}`;
  await batchDelete(items.filter((item) => item.subject === 'message' && item.subjectId === messageId).map(keyOf));
  // A thread's item gone with the thread meanwhile leaves nothing to take away.
  for (const item of items.filter((candidate) => name in candidate))
    await updateIfConditionHolds({
      TableName: getConfig().tableName,
      Key: keyOf(item),
      UpdateExpression: 'REMOVE #mark',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#mark': name },
    });
}

/**
 * Folds a markup's legacy message marks (one item a message) into the item of their thread and
 * user, and deletes them: `threads backfill`, before the markup moves to layout 3. Each fold is one
 * transaction that holds only while the thread exists (a mark of a thread deleted meanwhile is only
 * deleted, never left as an item nobody removes), writes the mark only over none or an earlier one
 * (by revision, then time), and deletes the legacy item only as it was read: an older release still
 * running may write that item again meanwhile (a later mark of the same message), and then the fold
 * reads it again and folds what it holds now, so no mark is lost. Safe to run again after a crash:
 * a mark already folded is not written again, and the legacy item is deleted once.
 */
export async function foldLegacyReadMarks(markupId: string): Promise<number> {
  const legacy = (await markItemsOf(markupId)).filter((item) => item.subject === 'message');
  for (const item of legacy) await foldLegacyMark(markupId, item);
  return legacy.length;
}

/** Folds one legacy mark item (see above), reading it again while an older release keeps writing it. */
async function foldLegacyMark(markupId: string, item: Record<string, unknown>): Promise<void> {
  let current: Record<string, unknown> | undefined = item;
  for (let attempt = 0; current !== undefined && attempt < 8; attempt += 1) {
    const [mark] = marksOf(current);
    if (!mark) return;
    const update = readMarksUpdate(markupId, [mark]).Update!;
    const deleteAsRead: TransactItem = {
      Delete: {
        TableName: getConfig().tableName,
        Key: keyOf(current),
        ConditionExpression: 'seenRevision = :seen AND seenAt = :at',
        ExpressionAttributeValues: { ':seen': mark.seenRevision, ':at': mark.seenAt },
      },
    };
    const failed = await transactUnlessConditionFails([
      {
        ConditionCheck: {
          TableName: getConfig().tableName,
          Key: threadKey(markupId, mark.threadId),
          ConditionExpression: 'attribute_exists(PK)',
        },
      },
      {
        Update: {
          ...update,
          ConditionExpression: 'attribute_not_exists(#m0) OR #m0.seenRevision < :seen OR (#m0.seenRevision = :seen AND #m0.seenAt < :at)',
          ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':seen': mark.seenRevision, ':at': mark.seenAt },
        },
      },
      deleteAsRead,
    ]);
    if (failed === undefined) return;
    // The thread is gone, or its item has this mark or a later one: only the legacy item goes, as read.
    if (failed < 2 && (await transactUnlessConditionFails([deleteAsRead])) === undefined) return;
    // Written again meanwhile (or gone): fold what it holds now.
    [current] = await batchGet([keyOf(current)], { consistent: true });
  }
  if (current !== undefined) throw new Error(`legacy read mark ${String(current.SK)} of markup ${markupId} kept changing during the fold`);
}
