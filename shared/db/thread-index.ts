import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { itemKey, type MarkupRecord } from './items.js';
import { markupPartition } from './markup-records.js';
import { KEYS_ONLY, queryPrefix, queryRange } from './core/paging.js';
import { recordOf } from './core/table.js';
import { batchDelete, batchGet, transactUnlessConditionFails, type TransactItem } from './core/transact.js';
import { THREAD_ITEM_WITH_COPY_LIMIT, threadKey, threadUnchanged, type ThreadRecord } from './threads.js';
import type { MessageRecord } from './messages.js';

/**
 * The thread index: what lets one page of GET /threads cost the same on a markup of 50 threads as
 * on one of 10,000.
 *
 * Layout. Beside its thread record, every thread has six small index items, one per sort key
 * kind, in the "leaf" of its filter values (resolved state x view mode id). Each (markup, kind,
 * leaf) is a partition of its own, in the main table (so reads are strongly consistent: a list
 * right after a create shows it), whose sort key is the thread's place in that order:
 *
 *     PK = TIX#<markupId>#<kind>#<leaf>   SK = <position>     (entity ThreadIndex, threadId)
 *     leaf = O|R . <viewModeId or ->
 *
 * A page starts at an end of its partition or at the cursor's position in it, never behind the
 * markup's threads, messages and read marks, so what one Query walks does not grow with the
 * conversation: DynamoDB serves a Query in time independent of the partition's size, and DynamoDB
 * Local (SQLite) pays for every item of the partition before the starting key, which in the
 * markup's partition was the whole conversation (layout 1 kept these items there: 3 ms for the
 * first page on 50 threads, 49-105 ms on 10,000).
 *
 * `position` is a fixed-width, byte-sortable encoding of the thread's place in the order (numbers
 * as 16 hex digits of their order-preserving IEEE-754 bits), always ending with the thread number,
 * unique in a markup, so positions are unique across leaves:
 *
 * | kind | position | serves |
 * |---|---|---|
 * | pin | number | pin_asc (forward), pin_desc (backward) |
 * | page | page, number | page |
 * | time | `0` startTime, number, or `1` number (no media time: last) | timestamp |
 * | prio | `0` priority, number, or `1` number (no priority: last) | priority_asc |
 * | prioDesc | `0` -priority, number, or `1` number | priority_desc |
 * | act | lastActivityAt, number | activity (backward) |
 *
 * One item per markup, `THREADINDEX` in the markup's partition, holds the layout version (`layout`,
 * set when the markup's first thread is created, or by the backfill), a count per leaf (`c:<leaf>`,
 * moved by ADD; a leaf has index partitions only if it has a counter, which is how a markup's
 * deletion finds them, `deleteThreadIndex`) and `writes`, moved by every thread write (the
 * backfill's optimistic lock).
 *
 * Writes. Every change that moves a thread in an order or a leaf writes the difference between
 * the index items of the thread as read and as written, plus the THREADINDEX update, in the SAME
 * transaction as the thread (`threadIndexWrites`), and the thread's page copy (layout 4, below):
 * create 6 puts + 1 update + the copy; resolve/unresolve 6 deletes + 6 puts + 1 + the copy; a
 * message added, edited or deleted and a pin move (activity) 1 delete + 1 put + 1 + the copy; a
 * priority change 3 deletes + 3 puts + 1 + the copy; a thread deletion 6 deletes + 1 + the copy's
 * delete. At most 14 items beside the existing ones, far under DynamoDB's 100.
 *
 * Reads. A page of `limit` in one order is a k-way merge of one Query per selected leaf (at most 8:
 * 2 resolved states x 3 view modes and none), each reading at most `limit + 1` keys from the
 * cursor's position (`readIndexRange`); then only the page's threads are read. `total` is the sum
 * of the selected leaves' counters. Leaves are the counter item's non-zero `c:` attributes, so a
 * view mode id the code does not know still lists.
 *
 * Migration. The index is the only layout GET /threads reads. Markups written before it have no
 * `layout`, and markups indexed in layout 1 (the index items under `MARKUP#<markupId>`,
 * `TIX#<kind>#<leaf>#<position>`) have `layout: 1`: they list only the threads that thread writes
 * indexed since (a thread created, or one moved to another leaf), until `backfillThreadIndex`
 * (`thread-index-backfill.ts`, admin CLI `threads backfill`) rebuilt their index from the
 * conversation, which also removes layout 1's items. Thread writes keep the current layout's index
 * of every markup, so the backfill is the only step. It is idempotent and safe beside writes: it
 * reads `writes`, rebuilds the items from the conversation, and sets `layout` and the counts only
 * if `writes` did not move.
 *
 * Layout 3 is layout 2's index with two changes beside it that a page reads: every thread keeps a
 * copy of its messages (`ThreadRecord.messages`, `threads.ts`) and each user's marks on a thread
 * are one item (`read-marks.ts`). Writes keep both on every markup; the backfill gives a layout 2
 * markup's older threads their copies and folds its older message marks, then sets layout 3. A
 * page of a markup before layout 3 reads its messages by key and its marks a key a message.
 *
 * Layout 4 adds page copies: every thread keeps a copy of its item as stored (with its copy of its
 * messages while they fit) in the markup's all-leaves pin partition, `TIX#<markupId>#pin#*` (the
 * pseudo-leaf `ALL_LEAVES`, which has no counter), keyed by its pin position (its number). Every
 * write of the thread item writes its copy in the same transaction, from the thread as written
 * (`threadIndexWrites` with the exact `after`; the screenshot worker, `settleScreenshot`; the
 * backfill, `embedMessages` and `putPageCopyIfUnchanged`), and a thread's deletion deletes it. The
 * default page (pin order, `pin_asc` or `pin_desc`, with no `resolved`, `viewMode`, `q` or offset)
 * of a layout 4 markup is then one Query of `limit + 1` copies from the cursor's position, not a
 * merge of every leaf's keys and a BatchGet of the threads: DynamoDB bills the same bytes, in one
 * call instead of one a leaf and one of 50 keys. Writes keep the copies on every markup; a markup's
 * first thread starts it at layout 4, and the backfill gives an older markup's threads their copies
 * (only while each thread is at the revision it read), deletes copies of threads that are gone
 * (only while their item is absent), then sets layout 4. Until then its pages read the index.
 * Each copy doubles what its thread stores and what each write of it costs.
 */

export const THREAD_INDEX_LAYOUT = 4;

/** Whether a page may read the caller's marks a key a thread (layout 3: no message mark is an item of its own). */
export const foldsReadMarks = (state: Pick<ThreadIndexState, 'layout'>) => (state.layout ?? 0) >= 3;
/** Whether every thread of the markup has its page copy (layout 4), so the default page may read them. */
export const keepsPageCopies = (state: Pick<ThreadIndexState, 'layout'>) => (state.layout ?? 0) >= 4;
export type IndexKind = 'pin' | 'page' | 'time' | 'prio' | 'prioDesc' | 'act';
const KINDS: readonly IndexKind[] = ['pin', 'page', 'time', 'prio', 'prioDesc', 'act'];

export const threadIndexStateKey = (markupId: string) => ({ PK: markupPartition(markupId), SK: 'THREADINDEX' });
/** The partition of one order's index of one leaf (see the layout above). */
export const indexPartition = (markupId: string, kind: IndexKind, leaf: string) => `TIX#${markupId}#${kind}#${leaf}`;
/** Sort-key prefix of layout 1's index items in the markup's partition; only the backfill still reads them (to remove them). */
export const LAYOUT_1_PREFIX = 'TIX#';

/** The pseudo-leaf of the page copies: every thread, whatever its resolved state and view mode (no counter of its own). */
export const ALL_LEAVES = '*';

/** The partition of a markup's page copies (layout 4, above). */
export const pageCopyPartition = (markupId: string) => indexPartition(markupId, 'pin', ALL_LEAVES);
/** The key of a thread's page copy (layout 4, above): its place in pin order among all the markup's threads. */
export const pageCopyKey = (markupId: string, number: number) => ({ PK: pageCopyPartition(markupId), SK: sortableNumber(number) });

/**
 * A thread's page copy under `pageCopyKey`: `thread` exactly as its item stores it (the caller's
 * record as written, whose copy of its messages was kept or dropped by `withCopyIfItFits` once), as
 * one JSON string, beside the id, number and revision the backfill compares. One string, not the
 * record's nested attributes: a Query of 51 copies of threads of three messages came back in about
 * half the time on DynamoDB Local (4.0-4.2 ms against 7.4-8.3 ms, JSON.parse included), as neither
 * side converts each nested attribute. JSON's quotes and braces weigh more than DynamoDB counts for
 * the same attributes; what the messages repeat of their thread, left out, more than makes up for
 * it (a page of 50 reads 52.5 units, against 52.5 as attributes and 59.5 as the plain string).
 */
export function pageCopyItem(thread: ThreadRecord): Record<string, unknown> {
  const key = { ...pageCopyKey(thread.markupId, thread.number), entity: 'ThreadPageCopy' };
  const shared = thread.messages?.every((message) => REPEATED.every(([field, threadField]) => message[field] === thread[threadField]));
  const record = JSON.stringify(shared ? { ...thread, messages: thread.messages!.map(withoutRepeated) } : thread);
  // JSON may weigh more than DynamoDB counts for the same attributes (quotes, escapes): a record
  // that large (a thread past its copy of its messages, with thousands of message ids) is copied as
  // its attributes, which weigh what its thread's own item does.
  if (Buffer.byteLength(record) > THREAD_ITEM_WITH_COPY_LIMIT) return { ...thread, ...key };
  return {
    ...key,
    id: thread.id,
    number: thread.number,
    revision: thread.revision,
    record,
    ...(shared ? { messagesRepeatThread: true } : {}),
  };
}

/**
 * What each message of a thread repeats of it: when every message repeats all of it (as every
 * write makes them), the copy's string leaves it out of the messages and says so
 * (`messagesRepeatThread`), and reading puts it back; about a sixth of a copy of three messages.
 */
const REPEATED = [
  ['threadId', 'id'],
  ['markupId', 'markupId'],
  ['workspaceId', 'workspaceId'],
  ['organizationId', 'organizationId'],
] as const satisfies readonly (readonly [keyof MessageRecord, keyof ThreadRecord])[];

function withoutRepeated(message: MessageRecord): Partial<MessageRecord> {
  const own: Partial<MessageRecord> = { ...message };
  for (const [field] of REPEATED) delete own[field];
  return own;
}

/**
 * The thread a page copy holds, its messages as stored. A copy of a very large record, and one
 * written before copies were one string (the first release of layout 4, rewritten as a string at
 * its thread's next write), is the record's own attributes.
 */
export function pageCopyRecord(item: Record<string, unknown>): ThreadRecord {
  if (typeof item.record !== 'string') return recordOf<ThreadRecord>(item);
  const thread = JSON.parse(item.record) as ThreadRecord;
  if (item.messagesRepeatThread !== true || thread.messages === undefined) return thread;
  // The messages were just parsed and belong to no one else: their ids are put back in place (a
  // copy of each message cost about 1 ms a page of 50 threads of three messages).
  for (const message of thread.messages) for (const [field, threadField] of REPEATED) message[field] = thread[threadField];
  return thread;
}

/** The transaction item that writes `thread`'s page copy as the thread is written. */
export const pageCopyPut = (thread: ThreadRecord): TransactItem => ({
  Put: { TableName: getConfig().tableName, Item: pageCopyItem(thread) },
});
/** The transaction item that deletes `thread`'s page copy with the thread. */
export const pageCopyDelete = (thread: Pick<ThreadRecord, 'markupId' | 'number'>): TransactItem => ({
  Delete: { TableName: getConfig().tableName, Key: pageCopyKey(thread.markupId, thread.number) },
});

/** The leaf of a thread: its resolved state and view mode id. */
export function leafOf(resolved: boolean, viewModeId: string | undefined): string {
  return `${resolved ? 'R' : 'O'}.${viewModeId ?? '-'}`;
}

/** What a leaf holds: its resolved state and view mode id (undefined: none). */
export function leafFilter(leaf: string): { resolved: boolean; viewModeId: string | undefined } {
  const [state, viewModeId] = [leaf.slice(0, 1), leaf.slice(2)];
  return { resolved: state === 'R', viewModeId: viewModeId === '-' ? undefined : viewModeId };
}

/** 16 hex digits that sort as the number does (IEEE-754 bits, sign flipped; negatives inverted). */
export function sortableNumber(value: number): string {
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleBE(value + 0);
  if (bytes[0]! & 0x80) for (let i = 0; i < 8; i += 1) bytes[i] = ~bytes[i]! & 0xff;
  else bytes[0] = bytes[0]! | 0x80;
  return bytes.toString('hex');
}

/** The number `sortableNumber` encoded (`hex`: its 16 digits). */
export function fromSortableNumber(hex: string): number {
  const bytes = Buffer.from(hex, 'hex');
  if (bytes[0]! & 0x80) bytes[0] = bytes[0]! & 0x7f;
  else for (let i = 0; i < 8; i += 1) bytes[i] = ~bytes[i]! & 0xff;
  return bytes.readDoubleBE();
}

/** The number of the thread at `position`, in any kind's index: every position ends with it (see the table above). */
export const threadNumberAt = (position: string) => fromSortableNumber(position.slice(-16));

/** The page of a thread in the `page` order: its PDF page, or the place of its image in a multi-image markup, else 0. */
export function threadPage(thread: ThreadRecord, markup: Pick<MarkupRecord, 'images'>): number {
  if (thread.pageNumber) return thread.pageNumber;
  if (thread.projectImageId && markup.images) {
    const index = markup.images.findIndex((image) => image.id === thread.projectImageId);
    if (index >= 0) return index + 1;
  }
  return 0;
}

/** The thread's position in the index of `kind` (see the table above). */
export function positionIn(kind: IndexKind, thread: ThreadRecord, markup: Pick<MarkupRecord, 'images'>): string {
  const number = sortableNumber(thread.number);
  const optional = (value: number | null | undefined) =>
    value === null || value === undefined ? `1${number}` : `0${sortableNumber(value)}${number}`;
  switch (kind) {
    case 'pin':
      return number;
    case 'page':
      return `${sortableNumber(threadPage(thread, markup))}${number}`;
    case 'time':
      return optional(thread.startTime);
    case 'prio':
      return optional(thread.priority);
    case 'prioDesc':
      return optional(thread.priority === null || thread.priority === undefined ? null : -thread.priority);
    case 'act':
      return `${sortableNumber(thread.lastActivityAt)}${number}`;
  }
}

/** The six index items of a thread (see the table above). */
export function indexItemsOf(markup: Pick<MarkupRecord, 'id' | 'images'>, thread: ThreadRecord): Record<string, unknown>[] {
  const leaf = leafOf(thread.resolved, thread.viewModeId);
  return KINDS.map((kind) => ({
    PK: indexPartition(markup.id, kind, leaf),
    SK: positionIn(kind, thread, markup),
    entity: 'ThreadIndex',
    threadId: thread.id,
  }));
}

/** An index item's primary key as one string (a partition never holds a `\n`). */
export const indexItemId = (item: Record<string, unknown>) => `${item.PK as string}\n${item.SK as string}`;

/**
 * The transaction items that keep the index in step with one thread write: `before` as read (none
 * for a creation), `after` as written (none for a deletion). Keys common to both are left alone (a
 * transaction may not touch one item twice); the leaf counters move when the leaf changes (the
 * counter of an unchanged leaf is touched by 0, so every leaf holding index items has one); `writes`
 * always moves; the thread's page copy is put as `after` (which must be the thread as its item
 * stores it, at its new revision) or deleted with the thread.
 */
export function threadIndexWrites(
  markup: Pick<MarkupRecord, 'id' | 'images'>,
  before: ThreadRecord | undefined,
  after: ThreadRecord | undefined,
): TransactItem[] {
  const TableName = getConfig().tableName;
  const old = new Map((before ? indexItemsOf(markup, before) : []).map((item) => [indexItemId(item), item]));
  const next = new Map((after ? indexItemsOf(markup, after) : []).map((item) => [indexItemId(item), item]));
  const items: TransactItem[] = [
    ...[...old.entries()]
      .filter(([id]) => !next.has(id))
      .map(([, item]): TransactItem => ({ Delete: { TableName, Key: { PK: item.PK, SK: item.SK } } })),
    ...[...next.entries()].filter(([id]) => !old.has(id)).map(([, Item]): TransactItem => ({ Put: { TableName, Item } })),
  ];
  const from = before ? leafOf(before.resolved, before.viewModeId) : undefined;
  const to = after ? leafOf(after.resolved, after.viewModeId) : undefined;
  const adds = ['writes :one'];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':one': 1 };
  if (from && from !== to) {
    adds.push('#from :minus');
    names['#from'] = `c:${from}`;
    values[':minus'] = -1;
  }
  if (to) {
    // Added even when the leaf stays (by 0): every leaf that holds index items has a counter, also
    // on a markup written before the index, whose counters start with its first thread write.
    adds.push(from === to ? '#to :zero' : '#to :one');
    names['#to'] = `c:${to}`;
    if (from === to) values[':zero'] = 0;
  }
  values[':entity'] = 'ThreadIndexState';
  items.push({
    Update: {
      TableName,
      Key: threadIndexStateKey(markup.id),
      UpdateExpression: `SET entity = :entity ADD ${adds.join(', ')}`,
      ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
      ExpressionAttributeValues: values,
    },
  });
  if (after) items.push(pageCopyPut(after));
  else if (before) items.push(pageCopyDelete(before));
  return items;
}

/**
 * What a markup's first thread number is drawn with (`nextThreadNumber`'s `firstWrites`): its index
 * state in the current layout, so every thread the markup will have is written with its index, also
 * when the first creation dies after its draw (the markup is not left waiting for a backfill); and a
 * check that the markup exists, so a markup deleted meanwhile gets no index state and no counter back.
 */
export function threadIndexStart(markupId: string): TransactItem[] {
  const TableName = getConfig().tableName;
  return [
    {
      Update: {
        TableName,
        Key: threadIndexStateKey(markupId),
        UpdateExpression: 'SET entity = :entity, layout = if_not_exists(layout, :layout)',
        ExpressionAttributeValues: { ':entity': 'ThreadIndexState', ':layout': THREAD_INDEX_LAYOUT },
      },
    },
    { ConditionCheck: { TableName, Key: itemKey(markupId), ConditionExpression: 'attribute_exists(PK)' } },
  ];
}

export interface ThreadIndexState {
  /** Undefined: the markup is in the old layout (no complete index yet). */
  layout: number | undefined;
  writes: number;
  /** Threads per leaf; only leaves with threads. */
  counts: Map<string, number>;
  /** Every leaf with a counter, empty (or, on a markup not yet backfilled, below zero) included. */
  counted: string[];
}

function stateOf(item: Record<string, unknown> | undefined): ThreadIndexState {
  const counts = new Map<string, number>();
  const counted = Object.keys(item ?? {})
    .filter((name) => name.startsWith('c:'))
    .map((name) => name.slice(2));
  for (const leaf of counted) if (Number(item![`c:${leaf}`]) > 0) counts.set(leaf, Number(item![`c:${leaf}`]));
  return { layout: item?.layout === undefined ? undefined : Number(item.layout), writes: Number(item?.writes ?? 0), counts, counted };
}

/** The markup's layout version and leaf counters (one consistent GetItem). */
export async function getThreadIndexState(markupId: string): Promise<ThreadIndexState> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: threadIndexStateKey(markupId), ConsistentRead: true }),
  );
  return stateOf(result.Item);
}

export interface IndexEntry {
  position: string;
  threadId: string;
}

/**
 * Up to `limit` entries of one leaf in the order of `kind`, forward or `backward`, strictly after
 * `after` (a position) when given: one Query of the leaf's partition (more only if DynamoDB's 1 MB
 * page ends first, which at ~100 bytes an entry takes thousands). Answers whether the leaf has more.
 */
export async function readIndexRange(
  markupId: string,
  kind: IndexKind,
  leaf: string,
  options: { limit: number; backward: boolean; after?: string },
): Promise<{ entries: IndexEntry[]; more: boolean }> {
  const { items, more } = await queryRange(indexPartition(markupId, kind, leaf), {
    ...options,
    projection: { expression: 'SK, threadId' },
  });
  return { entries: items.map((item) => ({ position: item.SK as string, threadId: item.threadId as string })), more };
}

/**
 * Up to `limit` page copies in pin order, forward or `backward`, strictly after `after` (a
 * position) when given: one Query (more only if DynamoDB's 1 MB page ends first, at about 4 KB a
 * thread of three messages some 250 copies). Answers the threads as stored and whether more follow.
 */
export async function readPageCopies(
  markupId: string,
  options: { limit: number; backward: boolean; after?: string },
): Promise<{ threads: ThreadRecord[]; more: boolean }> {
  const { items, more } = await queryRange(pageCopyPartition(markupId), options);
  return { threads: items.map(pageCopyRecord), more };
}

/** Every page copy of a markup, by thread number: its thread and revision (`threads backfill`). */
export async function pageCopiesOf(markupId: string): Promise<Map<number, { threadId: string; revision: number }>> {
  const items = await queryPrefix(pageCopyPartition(markupId), undefined, {
    consistent: true,
    projection: { expression: 'id, #number, revision', names: { '#number': 'number' } },
  });
  return new Map(items.map((item) => [Number(item.number), { threadId: item.id as string, revision: Number(item.revision) }]));
}

/** The threads of the given numbers as their page copies hold them (one consistent BatchGet per 100); numbers without a copy are left out. */
export async function getPageCopies(markupId: string, numbers: readonly number[]): Promise<ThreadRecord[]> {
  if (numbers.length === 0) return [];
  return (
    await batchGet(
      numbers.map((number) => pageCopyKey(markupId, number)),
      { consistent: true },
    )
  ).map(pageCopyRecord);
}

/**
 * Deletes the page copy of a thread that is gone (an older release deleted it without its copy),
 * only while its thread item is absent: a thread created since the copies were listed keeps its own.
 */
export async function deletePageCopyOfGoneThread(markupId: string, number: number, threadId: string): Promise<void> {
  await transactUnlessConditionFails([
    {
      ConditionCheck: {
        TableName: getConfig().tableName,
        Key: threadKey(markupId, threadId),
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    { Delete: { TableName: getConfig().tableName, Key: pageCopyKey(markupId, number) } },
  ]);
}

/**
 * Writes a thread's page copy as read, only while the thread is still at that revision (a write
 * since wrote its own copy): `threads backfill`. Answers false when the thread changed or went away.
 */
export async function putPageCopyIfUnchanged(thread: ThreadRecord): Promise<boolean> {
  return (await transactUnlessConditionFails([threadUnchanged(thread), pageCopyPut(thread)])) === undefined;
}

/**
 * How many entries of one leaf come strictly before `position` in the order of `kind` (COUNT
 * Queries, no items returned; DynamoDB still reads the keys, 1 MB a request: this grows with the
 * position).
 */
export async function countBefore(
  markupId: string,
  kind: IndexKind,
  leaf: string,
  position: string,
  options: { backward: boolean },
): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const result = await getDb().send(
      new QueryCommand({
        TableName: getConfig().tableName,
        KeyConditionExpression: `PK = :pk AND SK ${options.backward ? '>' : '<'} :position`,
        ExpressionAttributeValues: { ':pk': indexPartition(markupId, kind, leaf), ':position': position },
        Select: 'COUNT',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    count += result.Count ?? 0;
    start = result.LastEvaluatedKey;
  } while (start);
  return count;
}

/**
 * Keys of every index item of a markup in the current layout: the partitions of each counted leaf and kind (`leaves`:
 * `ThreadIndexState.counted`), and the page copies' (what a markup's deletion removes).
 */
export async function indexItemKeysOf(markupId: string, leaves: readonly string[]): Promise<{ PK: string; SK: string }[]> {
  const partitions = [...leaves.flatMap((leaf) => KINDS.map((kind) => indexPartition(markupId, kind, leaf))), pageCopyPartition(markupId)];
  const keys = await Promise.all(partitions.map((PK) => queryPrefix(PK, undefined, { consistent: true, projection: KEYS_ONLY })));
  return keys.flat().map((item) => ({ PK: item.PK as string, SK: item.SK as string }));
}

/**
 * Removes a deleted markup's index partitions (before its `THREADINDEX` goes with the rest of the
 * markup's partition, `deleteMarkupSideRecords`): once the markup record is gone no thread write
 * can add to them.
 */
export async function deleteThreadIndex(markupId: string): Promise<void> {
  const state = await getThreadIndexState(markupId);
  await batchDelete(await indexItemKeysOf(markupId, state.counted));
}

/**
 * Index items and counter item for threads bulk-loaded into a markup that has no threads yet
 * (tests, bench): what `threadIndexWrites` would have written for each creation.
 */
export function threadIndexSeedItems(
  markup: Pick<MarkupRecord, 'id' | 'images'>,
  threads: readonly ThreadRecord[],
  layout = THREAD_INDEX_LAYOUT,
): Record<string, unknown>[] {
  const counts: Record<string, number> = {};
  for (const thread of threads)
    counts[`c:${leafOf(thread.resolved, thread.viewModeId)}`] = (counts[`c:${leafOf(thread.resolved, thread.viewModeId)}`] ?? 0) + 1;
  return [
    ...threads.flatMap((thread) => indexItemsOf(markup, thread)),
    ...(layout >= 4 ? threads.map(pageCopyItem) : []),
    { ...threadIndexStateKey(markup.id), entity: 'ThreadIndexState', layout, writes: 0, ...counts },
  ];
}
