import type { Principal } from '../../auth/principal.js';
import { forEachLimit } from '../../concurrency.js';
import type { MarkupRecord } from '../../db/items.js';
import { lastMarkupEventSeq, readMarkupEventLog } from '../../db/markup-events.js';
import { eventBody, type EventEnvelope } from '../webhooks/events.js';
import { loadMarkup } from './access.js';

/** One entry of a markup's log as clients read it: its seq and the event's webhook body. */
export interface MarkupEventEntry {
  seq: number;
  event: EventEnvelope;
}

export interface MarkupEventPage {
  items: MarkupEventEntry[];
  hasMore: boolean;
  /** The last entry's seq as text when more follow (the next page's `after`), else null. */
  nextCursor: string | null;
}

/** Bodies built at once for one page (each is a few reads the first time, one GetItem after). */
const BODY_CONCURRENCY = 8;

/**
 * GET /markups/{id}/events: the markup's events with seq > `after`, oldest first, at most `limit`,
 * for a caller who may read the markup (authorized like GET /markups/{id}: 404 for a deleted or
 * unknown markup, 403 outside the caller's reach; an end user's token bound to another markup is
 * refused).
 */
export async function listMarkupEvents(
  principal: Principal,
  markupId: string,
  page: { after: number; limit: number },
): Promise<MarkupEventPage> {
  const { markup } = await loadMarkup(principal, markupId, { plan: false });
  return markupEventsAfter(markup, page.after, page.limit);
}

/**
 * A markup's log after `after` (catch-up after a reconnect): up to `limit` entries, each event the
 * webhook body (`eventBody`, built once and stored, so the log, webhooks and live messages carry
 * the same bytes). The caller has authorized `markup` (read as its item, `getItem`/`loadMarkup`).
 */
export async function markupEventsAfter(markup: MarkupRecord, after: number, limit: number): Promise<MarkupEventPage> {
  const { entries, hasMore } = await readMarkupEventLog(markup, after, limit);
  const bodies = new Map<number, EventEnvelope>();
  await forEachLimit(entries, BODY_CONCURRENCY, async (entry) => {
    bodies.set(entry.seq, JSON.parse(await eventBody(entry.event)) as EventEnvelope);
  });
  const items = entries.map((entry) => ({ seq: entry.seq, event: bodies.get(entry.seq)! }));
  return { items, hasMore, nextCursor: hasMore ? String(items.at(-1)!.seq) : null };
}

/** The seq of the markup's latest event, 0 before its first (what a live subscription answers as `seq`). */
export async function currentMarkupEventSeq(markupId: string): Promise<number> {
  return lastMarkupEventSeq(markupId);
}
