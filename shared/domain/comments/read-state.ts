import type { MessageRecord } from '../../db/messages.js';
import type { ReadMark } from '../../db/read-marks.js';
import type { ThreadRecord } from '../../db/threads.js';

/**
 * Read state (States and transitions: "Thread or message unread"): what one user has seen of a
 * markup's threads and messages, from the read marks they left.
 */

/** A read mark: the user saw the thread or message as it was at thread revision `seenRevision`, at time `at`. */
export function readMark(
  userId: string,
  subject: ReadMark['subject'],
  subjectId: string,
  threadId: string,
  seenRevision: number,
  at: number,
): ReadMark {
  return { userId, subject, subjectId, threadId, seenRevision, seenAt: at };
}

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
    const state = messageReadState(message, threadMark, marks.messages.get(message.id));
    if (!state.read) unread += 1;
    lastSeenAt = Math.max(lastSeenAt, state.lastSeenAt);
    perMessage.set(message.id, state);
  }
  return { read: threadMark !== undefined && unread === 0, unreadMessageCount: unread, lastSeenAt, messages: perMessage };
}

/** One message's read state, from the user's mark of its thread and of the message itself (either may be missing). */
export function messageReadState(
  message: MessageRecord,
  threadMark: ReadMark | undefined,
  messageMark: ReadMark | undefined,
): { read: boolean; lastSeenAt: number } {
  const covered = Math.max(threadMark?.seenRevision ?? 0, messageMark?.seenRevision ?? 0);
  const read = (threadMark !== undefined || messageMark !== undefined) && covered >= message.threadRevision;
  return { read, lastSeenAt: Math.max(threadMark?.seenAt ?? 0, messageMark?.seenAt ?? 0) };
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
