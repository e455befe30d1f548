import { markupPartition } from './markup-records.js';
import { queryPrefix } from './core/paging.js';
import { recordOf } from './core/table.js';
import { batchGet } from './core/transact.js';

/**
 * Read marks live in the markup's partition keyed by user first (`READ#<userId>#<subjectId>`), so
 * the thread list reads one user's marks of a markup with one Query.
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
export const readMarkKey = (markupId: string, userId: string, subjectId: string) => ({
  PK: markupPartition(markupId),
  SK: `${readMarkPrefix(userId)}${subjectId}`,
});

export function toReadMarkItem(markupId: string, mark: ReadMark): Record<string, unknown> {
  return { ...readMarkKey(markupId, mark.userId, mark.subjectId), entity: 'ReadMark', markupId, ...mark };
}

/** Every read mark one user holds on a markup's threads and messages (one Query). */
export async function getReadMarks(markupId: string, userId: string): Promise<ReadMark[]> {
  return (await queryPrefix(markupPartition(markupId), readMarkPrefix(userId), { consistent: true })).map((item) =>
    recordOf<ReadMark>(item),
  );
}

/** One user's read marks on the given threads and messages of a markup (BatchGet). */
export async function getReadMarksFor(markupId: string, userId: string, subjectIds: readonly string[]): Promise<ReadMark[]> {
  return (
    await batchGet(
      subjectIds.map((subjectId) => readMarkKey(markupId, userId, subjectId)),
      { consistent: true },
    )
  ).map((item) => recordOf<ReadMark>(item));
}

/**
 * Keys of every user's read marks on one thread and its messages, or on one message: what a
 * deletion leaves behind. Marks are keyed by user first (the list reads one user's marks in one
 * Query), so this reads all marks of the markup and keeps the matching ones; deletions are rare.
 */
export async function readMarkKeysOf(
  markupId: string,
  subject: { threadId: string } | { messageId: string },
): Promise<Record<string, string>[]> {
  const [attribute, id] = 'threadId' in subject ? ['threadId', subject.threadId] : ['subjectId', subject.messageId];
  const marks = await queryPrefix(markupPartition(markupId), 'READ#', {
    filter: { expression: '#subject = :subject', names: { '#subject': attribute }, values: { ':subject': id } },
  });
  return marks.map((mark) => ({ PK: mark.PK as string, SK: mark.SK as string }));
}
