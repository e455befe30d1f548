import { randomUUID } from 'node:crypto';
import { queryPrefix } from './core/paging.js';
import { putNew, type TransactItem } from './core/transact.js';

/** Event types of the spec (Events 1 and 3). */
export type EventType =
  | 'comment_created'
  | 'comment_updated'
  | 'comment_screenshot_failed'
  | 'comment_resolved'
  | 'comment_unresolved'
  | 'markup_created'
  | 'markup_ready'
  | 'comment_reply_created'
  | 'markup_status_changed'
  | 'set_project_read_only'
  | 'project_review_created';

export interface EventRecord {
  id: string;
  type: EventType;
  workspaceId: string;
  markupId?: string;
  /** Comment events: the thread, and the message when one was added or edited. */
  threadId?: string;
  messageId?: string;
  /**
   * The actor's User id (an API key's user, a member, or an end user's User); absent for events no
   * principal caused directly (the envelope then names the markup's creator, see webhook-events).
   */
  userId?: string;
  createdAt: string;
  /**
   * Events that name a markup: its place in that markup's event log, counting the markup's events
   * from 1 without gaps, given in the change's own transaction (`markup-events.ts`, by `transact`).
   */
  seq?: number;
}

/** The `webhook.test` event of `POST /webhook-registrations/:id/test`: delivered, never recorded in the outbox. */
export interface WebhookTestEvent {
  id: string;
  type: 'webhook.test';
  workspaceId: string;
  userId?: string;
  createdAt: string;
}

/** What a webhook delivery delivers: a recorded event or a test event. */
export type DeliverableEvent = EventRecord | WebhookTestEvent;

/** What an emission point says; the id and time are the outbox's. */
export type NewEvent = Omit<EventRecord, 'id' | 'createdAt' | 'seq'>;

/** Events are kept 30 days: long enough for webhook deliveries and their retries. */
export const EVENT_RETENTION_SECONDS = 30 * 24 * 3600;

export const eventsPartition = (workspaceId: string) => `WS#${workspaceId}#EVENTS`;

const outboxKey = (workspaceId: string, createdAt: string, id: string) => ({ PK: eventsPartition(workspaceId), SK: `${createdAt}#${id}` });
export const eventExpiresAtEpoch = (at: Date) => Math.floor(at.getTime() / 1000) + EVENT_RETENTION_SECONDS;

/**
 * The outbox item of one event (entity `Event`, the EventRecord's fields at top level), to be
 * committed in the SAME transaction as the change it describes: no event without its change, no
 * change without its event. A retried transaction carries a fresh item each attempt and only the
 * attempt that commits leaves one. The id is the delivery's stable `webhook-id`.
 */
export function eventItem(event: NewEvent, at = new Date()): TransactItem {
  const record: EventRecord = { id: randomUUID(), createdAt: at.toISOString(), ...event };
  return putNew({
    ...outboxKey(event.workspaceId, record.createdAt, record.id),
    entity: 'Event',
    ...record,
    expiresAtEpoch: eventExpiresAtEpoch(at),
  });
}

/**
 * The outbox item of several events of ONE workspace committed by one transaction (a bulk
 * creation of 50 markups would otherwise exceed DynamoDB's 100 items per transaction): entity
 * `EventBatch` with `events` (EventRecord[], each with its own id). One event is a plain
 * `eventItem`. Consumers expand a batch into its events (`listEvents` does).
 */
export function eventItems(events: readonly NewEvent[], at = new Date()): TransactItem[] {
  const [first] = events;
  if (!first) return [];
  if (events.length === 1) return [eventItem(first, at)];
  if (events.some((event) => event.workspaceId !== first.workspaceId)) throw new Error('An event batch belongs to one workspace.');
  const createdAt = at.toISOString();
  const records: EventRecord[] = events.map((event) => ({ id: randomUUID(), createdAt, ...event }));
  return [
    putNew({
      ...outboxKey(first.workspaceId, createdAt, records[0]!.id),
      entity: 'EventBatch',
      workspaceId: first.workspaceId,
      createdAt,
      events: records,
      expiresAtEpoch: eventExpiresAtEpoch(at),
    }),
  ];
}

/** The events an outbox item holds: itself (`Event`) or its `events` (`EventBatch`). */
export function eventsOfItem(item: Record<string, unknown>): EventRecord[] {
  if (item.entity === 'EventBatch') return item.events as EventRecord[];
  const { PK: _pk, SK: _sk, entity: _entity, expiresAtEpoch: _expires, ...record } = item;
  return [record as unknown as EventRecord];
}

/** A workspace's recorded events, oldest first (tests and the webhooks issue). */
export async function listEvents(workspaceId: string): Promise<EventRecord[]> {
  return (await queryPrefix(eventsPartition(workspaceId), undefined, { consistent: true })).flatMap(eventsOfItem);
}
