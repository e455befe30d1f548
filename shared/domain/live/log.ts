import type { EventRecord } from '../../db/events.js';
import { getItem } from '../../db/items.js';
import { lastMarkupEventSeq, readMarkupEventLog } from '../../db/markup-events.js';

/**
 * The per-markup event log live subscriptions catch up from (issue 32 item 1: every outbox event
 * carries `seq`, counting its markup's events from 1 without gaps). The log itself is built apart
 * (the `seq` of `shared/db/events.ts` and its reader); live updates need only this much of it.
 */
export interface LoggedEvent {
  seq: number;
  event: EventRecord;
}

export interface MarkupEventLog {
  /** The markup's last seq (0: no event yet), strongly consistent. */
  lastSeq(markupId: string): Promise<number>;
  /** The markup's events with `seq > after`, oldest first, at most `limit`, strongly consistent. */
  eventsAfter(markupId: string, after: number, limit: number): Promise<{ events: LoggedEvent[]; hasMore: boolean }>;
}

/** An outbox event's seq; undefined for an event recorded before events carried one. */
export function seqOf(event: EventRecord): number | undefined {
  const seq = (event as EventRecord & { seq?: unknown }).seq;
  return typeof seq === 'number' ? seq : undefined;
}

/**
 * The log of `shared/db/markup-events.ts`: heads and entries read consistently. A markup that is
 * gone has no entries (its subscription was refused or is closed by then).
 */
export const markupEventLog: MarkupEventLog = {
  lastSeq: (markupId) => lastMarkupEventSeq(markupId),
  eventsAfter: async (markupId, after, limit) => {
    const markup = await getItem(markupId, true);
    if (!markup || markup.kind !== 'markup') return { events: [], hasMore: false };
    const { entries, hasMore } = await readMarkupEventLog(markup, after, limit);
    return { events: entries.map((entry) => ({ seq: entry.seq, event: entry.event })), hasMore };
  },
};
