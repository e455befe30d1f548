import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { EVENT_RETENTION_SECONDS, eventExpiresAtEpoch, type EventRecord } from './events.js';
import { itemKey } from './items.js';
import { markupPartition } from './markup-records.js';
import { TABLE } from './core/table.js';
import type { TransactItem } from './core/transact.js';
import { MARKUP_EVENT_SEQ_DIGITS, MAX_MARKUP_EVENT_SEQ } from '../schemas/markups.js';

/**
 * The per-markup event log (issue 32; DESIGN.md "Live updates"): every outbox event that names a
 * markup gets `seq`, that markup's events counted from 1 without gaps, in the transaction of the
 * change itself. `transact` calls `sequenceMarkupEvents` on every transaction, so no emission point
 * numbers anything; what it adds:
 * - the head `MARKUP#<markupId>` / `EVENTSEQ` (`lastSeq`, no TTL, so numbering never restarts),
 *   moved from the value read to the new one under a condition on that value: of concurrent
 *   changes one commits and the others read again (no counter race, and a failed or retried
 *   transaction leaves no gap, as nothing is counted outside the commit);
 * - one log item per event, `MARKUPEVENTS#<markupId>` / `SEQ#<seq, 12 digits>`, the EventRecord
 *   with its `seq`, kept 30 days (TTL) like the outbox.
 * A markup created in the same transaction (one or fifty: bulk creation is one transaction near
 * DynamoDB's 100 items) costs no item at all: its events (seq 1..k) ride on its own conditional
 * Put as `createdEvents`, which stands for both its head (k) and its first log entries, until a
 * later event writes the head.
 */

const HEAD_SK = 'EVENTSEQ';
const LOG_PREFIX = 'SEQ#';

export const markupEventHeadKey = (markupId: string) => ({ PK: markupPartition(markupId), SK: HEAD_SK });
export const markupEventLogPartition = (markupId: string) => `MARKUPEVENTS#${markupId}`;
export const markupEventLogKey = (markupId: string, seq: number) => ({
  PK: markupEventLogPartition(markupId),
  SK: `${LOG_PREFIX}${String(seq).padStart(MARKUP_EVENT_SEQ_DIGITS, '0')}`,
});

export { MAX_MARKUP_EVENT_SEQ };

/** The attribute of a markup item that holds the events of its creation (EventRecord[] with seq 1..k). */
const CREATED_EVENTS = 'createdEvents';

/** One entry of a markup's log. */
export interface MarkupLogEntry {
  seq: number;
  event: EventRecord & { seq: number };
}

// ---------------------------------------------------------------------------------------------
// Numbering, inside every transaction
// ---------------------------------------------------------------------------------------------

type PutItem = NonNullable<TransactItem['Put']>;

/** An outbox Put (`Event` or `EventBatch`) and the events it holds. */
interface OutboxPut {
  index: number;
  put: PutItem;
  events: EventRecord[];
}

function outboxPuts(items: readonly TransactItem[]): OutboxPut[] {
  const found: OutboxPut[] = [];
  items.forEach((item, index) => {
    const put = item.Put;
    const entity = put?.Item?.entity;
    if (!put || (entity !== 'Event' && entity !== 'EventBatch')) return;
    const events = entity === 'EventBatch' ? (put.Item!.events as EventRecord[]) : [put.Item as unknown as EventRecord];
    if (events.some((event) => event.markupId)) found.push({ index, put, events });
  });
  return found;
}

/** True when the transaction records an event that names a markup: then it needs `sequenceMarkupEvents`. */
export function namesMarkupEvents(items: readonly TransactItem[]): boolean {
  return outboxPuts(items).length > 0;
}

/** The index of the conditional Put that creates markup `markupId` in this transaction, if it does. */
function creationIndex(items: readonly TransactItem[], markupId: string): number {
  return items.findIndex(
    (item) =>
      item.Put?.Item?.entity === 'Markup' && item.Put.Item.id === markupId && item.Put.ConditionExpression === 'attribute_not_exists(PK)',
  );
}

/** What a markup's log holds so far: its head's `lastSeq`, or (no head yet) the events of its creation. */
interface Head {
  lastSeq: number;
  /** Whether the head item exists (its update is then conditioned on `lastSeq`, else on its absence). */
  stored: boolean;
}

/** Heads learnt from a failed attempt (the failure hands the current head back), by markup id: the next attempt reads no others. */
export type KnownHeads = ReadonlyMap<string, Head>;

/** The markups whose heads a transaction moves: those its events name, less those it creates. */
function markupsToNumber(items: readonly TransactItem[]): string[] {
  const ids = new Set(outboxPuts(items).flatMap((put) => put.events.flatMap((event) => (event.markupId ? [event.markupId] : []))));
  return [...ids].filter((id) => creationIndex(items, id) < 0).sort();
}

/** The end of the last turn taken on each markup in this process. */
const turns = new Map<string, Promise<void>>();

/**
 * Runs `work` (read the heads, commit) after this process's earlier turns on the same markups have
 * ended: concurrent requests handled by one process then never fail each other's head conditions.
 * Other processes still can (the condition decides; `transact` retries). Turns on several markups
 * are taken in id order, so two transactions never wait for each other.
 */
export async function inMarkupTurn<T>(items: readonly TransactItem[], work: () => Promise<T>): Promise<T> {
  const ids = markupsToNumber(items);
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  const before = ids.map((id) => turns.get(id) ?? Promise.resolve());
  for (const id of ids) turns.set(id, done);
  try {
    await Promise.all(before);
    return await work();
  } finally {
    release();
    for (const id of ids) if (turns.get(id) === done) turns.delete(id);
  }
}

/** A transaction with its events numbered, and what its outcome teaches about the heads. */
export interface NumberedTransaction {
  items: TransactItem[];
  /**
   * The heads the cancellation reasons hand back for the head updates whose condition failed (a head it does not hand back is read again).
   */
  headsAfterFailure(reasons: readonly { Code?: string; Item?: Record<string, unknown> }[]): KnownHeads;
  /** Remembers the heads this transaction moved, once it committed: this process's next change on the markup reads none. */
  committed(): void;
}

/**
 * The heads this process moved last, by markup id: while no other process writes a markup's events
 * (one warm function instance, the local stack), its next change reads no head. A hint only: the
 * head's condition decides. A remembered head found stale (another process moved it) costs a failed
 * attempt, more than a read, so such a markup reads its head for a while instead (`SHARED_MS`).
 */
const rememberedHeads = new Map<string, Head>();
const sharedUntil = new Map<string, number>();
/** Markups a process keeps in each map; the oldest entry goes first. */
const REMEMBERED_MARKUPS = 1000;
const SHARED_MS = 60_000;

function setBounded<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > REMEMBERED_MARKUPS) map.delete(map.keys().next().value!);
}

function rememberedHead(markupId: string): Head | undefined {
  if ((sharedUntil.get(markupId) ?? 0) > Date.now()) return undefined;
  return rememberedHeads.get(markupId);
}

/**
 * The transaction `items` with every event that names a markup numbered: each markup's head read
 * (consistently) now, unless `known` holds it, the outbox items copied with `seq` on their events,
 * a markup created here given its `createdEvents`, and per markup not created here the head's
 * conditional update and one log item per event appended after the caller's items (whose indexes
 * stay as they were). Run again for each attempt: a head's condition failing means another change
 * took those numbers.
 */
export async function sequenceMarkupEvents(items: readonly TransactItem[], known: KnownHeads = new Map()): Promise<NumberedTransaction> {
  const puts = outboxPuts(items);
  const existing = markupsToNumber(items);
  const fromMemory = new Set(existing.filter((id) => !known.has(id) && rememberedHead(id)));
  const heads = new Map(
    await Promise.all(existing.map(async (id) => [id, known.get(id) ?? rememberedHead(id) ?? (await readHead(id))] as const)),
  );

  const next = new Map<string, number>();
  const numbered = new Map<string, (EventRecord & { seq: number })[]>();
  const number = (event: EventRecord): EventRecord => {
    if (!event.markupId) return event;
    const seq = (next.get(event.markupId) ?? heads.get(event.markupId)?.lastSeq ?? 0) + 1;
    next.set(event.markupId, seq);
    const record = { ...event, seq };
    numbered.set(event.markupId, [...(numbered.get(event.markupId) ?? []), record]);
    return record;
  };

  const result = [...items];
  for (const { index, put, events } of puts) {
    const records = events.map(number);
    const item = put.Item!.entity === 'EventBatch' ? { ...put.Item, events: records } : { ...put.Item, seq: records[0]!.seq };
    result[index] = { Put: { ...put, Item: item } };
  }
  for (const markupId of numbered.keys()) {
    const index = creationIndex(items, markupId);
    if (index < 0) continue;
    const put = result[index]!.Put!;
    result[index] = { Put: { ...put, Item: { ...put.Item, [CREATED_EVENTS]: numbered.get(markupId) } } };
  }
  const headIndexes = new Map<number, string>();
  for (const markupId of existing) {
    headIndexes.set(result.length, markupId);
    result.push(headUpdate(markupId, heads.get(markupId)!, next.get(markupId)!));
    for (const record of numbered.get(markupId) ?? []) result.push(logPut(record));
  }
  return {
    items: result,
    headsAfterFailure: (reasons) => {
      const learnt = new Map<string, Head>();
      for (const [index, markupId] of headIndexes) {
        const reason = reasons[index];
        const stored = reason?.Code === 'ConditionalCheckFailed' ? storedNumber(reason.Item?.lastSeq) : undefined;
        const failed = reason?.Code !== undefined && reason.Code !== 'None';
        if (failed && fromMemory.has(markupId)) {
          rememberedHeads.delete(markupId);
          setBounded(sharedUntil, markupId, Date.now() + SHARED_MS);
        }
        if (stored !== undefined) learnt.set(markupId, { lastSeq: stored, stored: true });
        else if (!failed) learnt.set(markupId, heads.get(markupId)!);
      }
      return learnt;
    },
    committed: () => {
      for (const markupId of existing) {
        if ((sharedUntil.get(markupId) ?? 0) <= Date.now())
          setBounded(rememberedHeads, markupId, { lastSeq: next.get(markupId)!, stored: true });
      }
    },
  };
}

/** A number attribute as a cancellation reason carries it (DynamoDB's `{ N: "5" }`, not unmarshalled) or as a plain number. */
function storedNumber(value: unknown): number | undefined {
  const raw = typeof value === 'object' && value !== null && 'N' in value ? (value as { N: string }).N : value;
  const number = Number(raw);
  return raw === undefined || !Number.isSafeInteger(number) ? undefined : number;
}

async function readHead(markupId: string): Promise<Head> {
  const tableName = getConfig().tableName;
  const head = await getDb().send(new GetCommand({ TableName: tableName, Key: markupEventHeadKey(markupId), ConsistentRead: true }));
  if (head.Item) return { lastSeq: Number(head.Item.lastSeq), stored: true };
  // No head yet: the markup's creation events are its first entries (none on markups made before the log).
  const markup = await getDb().send(
    new GetCommand({
      TableName: tableName,
      Key: itemKey(markupId),
      ConsistentRead: true,
      ProjectionExpression: '#created',
      ExpressionAttributeNames: { '#created': CREATED_EVENTS },
    }),
  );
  return { lastSeq: createdEventsOf(markup.Item).length, stored: false };
}

function headUpdate(markupId: string, head: Head, lastSeq: number): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: markupEventHeadKey(markupId),
      UpdateExpression: 'SET lastSeq = :next, entity = :entity, markupId = :markup',
      ConditionExpression: head.stored ? 'lastSeq = :read' : 'attribute_not_exists(PK)',
      // A failure hands back the head that stands, so the next attempt needs no read.
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      ExpressionAttributeValues: {
        ':next': lastSeq,
        ':entity': 'MarkupEventHead',
        ':markup': markupId,
        ...(head.stored ? { ':read': head.lastSeq } : {}),
      },
    },
  };
}

/** A log entry: unconditional, as the head's condition alone decides who holds a number. */
function logPut(record: EventRecord & { seq: number }): TransactItem {
  return {
    Put: {
      TableName: getConfig().tableName,
      Item: {
        ...markupEventLogKey(record.markupId!, record.seq),
        entity: 'MarkupEvent',
        markupId: record.markupId,
        seq: record.seq,
        event: record,
        [TABLE.ttlAttribute]: eventExpiresAtEpoch(new Date(record.createdAt)),
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

function createdEventsOf(item: object | undefined): (EventRecord & { seq: number })[] {
  const events = (item as Record<string, unknown> | undefined)?.[CREATED_EVENTS];
  return Array.isArray(events) ? (events as (EventRecord & { seq: number })[]) : [];
}

/** Whether an event is still within the log's 30 days. */
const kept = (event: EventRecord, now: number) => Date.parse(event.createdAt) + EVENT_RETENTION_SECONDS * 1000 > now;

/**
 * Up to `limit` entries of a markup's log with seq > `after`, oldest first, and whether more
 * follow (consistent reads: an entry committed before the call is in it). `markup` is the markup
 * item as read (its `createdEvents` are the first entries); the caller has authorized the read.
 */
export async function readMarkupEventLog(
  markup: { id: string },
  after: number,
  limit: number,
): Promise<{ entries: MarkupLogEntry[]; hasMore: boolean }> {
  const now = Date.now();
  const creation = createdEventsOf(markup);
  const early = creation.filter((event) => event.seq > after && kept(event, now)).map((event) => ({ seq: event.seq, event }));
  if (early.length > limit) return { entries: early.slice(0, limit), hasMore: true };
  const from = Math.max(after, creation.length);
  const wanted = limit - early.length;
  const result = await getDb().send(
    new QueryCommand({
      TableName: getConfig().tableName,
      KeyConditionExpression: 'PK = :pk AND SK > :from',
      ExpressionAttributeValues: { ':pk': markupEventLogPartition(markup.id), ':from': markupEventLogKey(markup.id, from).SK },
      ConsistentRead: true,
      Limit: wanted + 1,
    }),
  );
  const later = (result.Items ?? []).map((item) => ({ seq: Number(item.seq), event: item.event as MarkupLogEntry['event'] }));
  return { entries: [...early, ...later.slice(0, wanted)], hasMore: later.length > wanted };
}

/** The seq of a markup's latest event (0 when it has none): where a live subscription starts. */
export async function lastMarkupEventSeq(markupId: string): Promise<number> {
  return (await readHead(markupId)).lastSeq;
}
