import { forEachLimit } from '../../concurrency.js';
import { getReadMarks } from '../../db/read-marks.js';
import { getPageCopies, keepsPageCopies, pageCopiesOf } from '../../db/thread-index.js';
import { getConversation, getMessagesOf } from '../../db/threads.js';
import { getUnreadCountStates, storeUnreadCount, type UnreadCountState } from '../../db/unread-counts.js';
import { indexReadMarks, readStateOf } from './read-state.js';

/** Conversations counted at once when a listing finds stale counts. */
const RECOUNTS_IN_FLIGHT = 8;

/**
 * How many of each markup's threads `userId` has not read (`read: false` on GET /threads: never
 * marked, or a message changed since), for a listing of markups. The counts come from the cache
 * beside each conversation (`db/unread-counts.ts`): one consistent BatchGetItem per 50 markups.
 * A markup whose conversation changed, or whose threads the user marked read, since its count was
 * stored is counted again with the read rules of GET /threads (`readStateOf`), from the user's read
 * marks and, on a markup whose threads keep page copies (layout 4), each thread's id and revision
 * (the whole conversation before it), and the count stored for the next listing.
 */
export async function unreadThreadCounts(markupIds: readonly string[], userId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (markupIds.length === 0) return counts;
  const states = await getUnreadCountStates(markupIds, userId);
  const stale: UnreadCountState[] = [];
  for (const state of states) {
    // A markup without thread writes is counted once too: threads from before the index have none.
    if (state.cached !== undefined) counts.set(state.markupId, state.cached);
    else stale.push(state);
  }
  await forEachLimit(stale, RECOUNTS_IN_FLIGHT, async (state) => {
    const count = await countUnreadThreads(state, userId);
    counts.set(state.markupId, count);
    await storeUnreadCount(state, userId, count);
  });
  return counts;
}

/** How many of a markup's threads `userId` has not read, counted from the table (the recount of a stale count; the bench measures it). */
export async function countUnreadThreads(state: UnreadCountState, userId: string): Promise<number> {
  if (!keepsPageCopies(state)) {
    const [conversation, marks] = await Promise.all([getConversation(state.markupId), getReadMarks(state.markupId, userId)]);
    const index = indexReadMarks(marks);
    return conversation.threads.filter((thread) => !readStateOf(thread, conversation.messages.get(thread.id) ?? [], index).read).length;
  }
  // Every thread's id and revision from its page copy (a Query that answers three attributes a
  // thread), beside the user's marks. A thread never marked is unread; one whose mark covers its
  // revision is read (every change of a message moves its thread's revision, so no message is
  // newer than the thread). Only threads changed since their mark are read whole, to see which
  // messages the user's marks cover.
  const [copies, marks] = await Promise.all([pageCopiesOf(state.markupId), getReadMarks(state.markupId, userId)]);
  const index = indexReadMarks(marks);
  let unread = 0;
  const changedSinceMarked: number[] = [];
  for (const [number, { threadId, revision }] of copies) {
    const seen = index.threads.get(threadId)?.seenRevision;
    if (seen === undefined) unread += 1;
    else if (seen < revision) changedSinceMarked.push(number);
  }
  const changed = await getMessagesOf(state.markupId, await getPageCopies(state.markupId, changedSinceMarked));
  for (const { thread, messages } of changed.values()) if (!readStateOf(thread, messages, index).read) unread += 1;
  return unread;
}
