import { forEachLimit } from '../../concurrency.js';
import { getReadMarks } from '../../db/read-marks.js';
import { getConversation } from '../../db/threads.js';
import { getUnreadCountStates, storeUnreadCount, type UnreadCountState } from '../../db/unread-counts.js';
import { indexReadMarks, readStateOf } from './read-state.js';

/** Conversations counted at once when a listing finds stale counts. */
const RECOUNTS_IN_FLIGHT = 8;

/**
 * How many of each markup's threads `userId` has not read (`read: false` on GET /threads: never
 * marked, or a message changed since), for a listing of markups. The counts come from the cache
 * beside each conversation (`db/unread-counts.ts`): one consistent BatchGetItem per 50 markups.
 * A markup whose conversation changed, or whose threads the user marked read, since its count was
 * stored is counted again with the read rules of GET /threads (`readStateOf`) from two Queries
 * (the conversation and the user's read marks) and the count stored for the next listing.
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
    const count = await countUnreadThreads(state.markupId, userId);
    counts.set(state.markupId, count);
    await storeUnreadCount(state, userId, count);
  });
  return counts;
}

async function countUnreadThreads(markupId: string, userId: string): Promise<number> {
  const [conversation, marks] = await Promise.all([getConversation(markupId), getReadMarks(markupId, userId)]);
  const index = indexReadMarks(marks);
  return conversation.threads.filter((thread) => !readStateOf(thread, conversation.messages.get(thread.id) ?? [], index).read).length;
}
