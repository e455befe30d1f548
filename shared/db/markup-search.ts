import { createHash } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { isIndexUnavailable } from './core/errors.js';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { decodeCursor, encodeCursor } from './core/cursor.js';
import { BadRequestError } from '../errors.js';
import { getCursorKey } from './core/cursor-keys.js';
import { fromItem, getItems, workspaceMarkupsPartition, type MarkupRecord } from './items.js';
import {
  indexedWords,
  markupWordKeys,
  matchesWords,
  MAX_INDEXED_WORD_LENGTH,
  UNINDEXED_URL_WORDS,
  WORD_SLOTS,
  wordIndex,
  wordOfSortKey,
  wordsOf,
  workspaceWordsPartition,
} from './markup-words.js';
import { SORT_SEPARATOR } from './core/table.js';

/**
 * Items a search request may read before it answers with what it found so far. A rare term in a
 * huge workspace then takes several requests (each with a cursor) instead of one that times out.
 */
export const SEARCH_READ_BUDGET = 5000;
const SEARCH_QUERY_PAGE = 250;

export interface SearchPage {
  items: MarkupRecord[];
  hasMore: boolean;
  nextCursor: string | null;
}

const GSI4_KEY_ATTRIBUTES = ['PK', 'SK', 'GSI4PK', 'GSI4SK'] as const;

/**
 * Markups of the workspace, in every folder, whose name or URL contains `text` (case-insensitive),
 * newest first: the search of a query with no indexed word (empty, punctuation, or only `http`,
 * `https`, `www`, which nearly every webpage markup holds, so matches come early). It queries the workspace's markup index (GSI4) with a
 * filter on the lowercase
 * `searchText` attribute and keeps reading until it holds `limit + 1` matches (so `hasMore` is
 * exact), the partition ends, or the read budget is spent (then `hasMore` is true and the cursor
 * continues from where reading stopped). Never a Scan.
 */
export async function scanWorkspaceMarkups(
  workspaceId: string,
  options: { text: string; limit: number; before?: string },
): Promise<SearchPage> {
  const needle = options.text.trim().toLowerCase();
  const partition = workspaceMarkupsPartition(workspaceId);
  const list = `markups:search:${createHash('sha256').update(`${workspaceId}\n${needle}`).digest('base64url').slice(0, 16)}`;
  const key = await getCursorKey();
  let start = options.before ? decodeSearchCursor(key, list, options.before, partition) : undefined;
  const matches: Record<string, unknown>[] = [];
  let read = 0;
  let exhausted = false;
  while (matches.length <= options.limit) {
    const result = await getDb().send(
      new QueryCommand({
        TableName: getConfig().tableName,
        IndexName: 'GSI4',
        KeyConditionExpression: 'GSI4PK = :pk',
        ...(needle ? { FilterExpression: 'contains(searchText, :q)' } : {}),
        ExpressionAttributeValues: { ':pk': partition, ...(needle ? { ':q': needle } : {}) },
        ScanIndexForward: false,
        ExclusiveStartKey: start,
        Limit: SEARCH_QUERY_PAGE,
      }),
    );
    matches.push(...(result.Items ?? []));
    read += result.ScannedCount ?? 0;
    start = result.LastEvaluatedKey;
    if (!start) {
      exhausted = true;
      break;
    }
    if (read >= SEARCH_READ_BUDGET) break;
  }
  const position = (item: Record<string, unknown>) =>
    encodeCursor(key, list, Object.fromEntries(GSI4_KEY_ATTRIBUTES.map((name) => [name, item[name]])));
  const page = matches.slice(0, options.limit);
  const records = page.map((item) => fromItem(item) as MarkupRecord);
  if (matches.length > options.limit) return { items: records, hasMore: true, nextCursor: position(page.at(-1)!) };
  if (!exhausted && start) return { items: records, hasMore: true, nextCursor: position(start) };
  return { items: records, hasMore: false, nextCursor: null };
}

function decodeSearchCursor(key: Buffer, list: string, cursor: string, partition: string): Record<string, string> {
  const position = decodeCursor(key, list, cursor, 'before');
  const valid = GSI4_KEY_ATTRIBUTES.every((name) => typeof position[name] === 'string') && position.GSI4PK === partition;
  if (!valid) throw new BadRequestError('before is not a valid cursor for this search.', 'invalid-cursor');
  return position as Record<string, string>;
}

/** Index entries a word search examines per request before it answers with what it found (a cursor continues). */
export const WORD_SEARCH_BUDGET = 2000;
/** Entries per word slot a multi-word search probes to learn which of its words are rare. */
export const WORD_PROBE_LIMIT = 50;

/**
 * GET /markups/search: markups of the workspace whose name or URL has, for every word of the query,
 * a word starting with it (case-insensitive, folded; `markupWords`). The markups are read from the
 * word index by the query's rare words (`drivingPrefixes`), every other word is checked on the
 * record's full name and URL. Queries without an indexed word fall back to `scanWorkspaceMarkups`.
 * The cursor is bound to the workspace and the query, and names the driving words, so every page
 * of one search reads the same index ranges.
 */
export async function searchWorkspaceMarkups(
  workspaceId: string,
  options: { text: string; limit: number; before?: string },
): Promise<SearchPage> {
  const queryWords = wordsOf(options.text);
  const candidates = [
    ...new Set(queryWords.filter((word) => !UNINDEXED_URL_WORDS.has(word)).map((word) => word.slice(0, MAX_INDEXED_WORD_LENGTH))),
  ];
  if (candidates.length === 0) return scanWorkspaceMarkups(workspaceId, options);
  const list = `markups:words:${createHash('sha256')
    .update(`${workspaceId}\n${queryWords.join(' ')}`)
    .digest('base64url')
    .slice(0, 16)}`;
  const key = await getCursorKey();
  if (options.before) {
    const { sortKey, prefixes } = decodeWordCursor(key, list, options.before, candidates);
    return searchWordIndex(workspaceId, { key, list, queryWords, prefixes, limit: options.limit, after: sortKey });
  }
  const prefixes = await drivingPrefixes(workspaceId, candidates);
  return searchWordIndex(workspaceId, { key, list, queryWords, prefixes, limit: options.limit });
}

/** The query words (at most their indexed length) that are not the continuation of another: their index ranges hold the others'. */
function outermost(prefixes: readonly string[]): string[] {
  return prefixes.filter((prefix) => !prefixes.some((other) => other !== prefix && prefix.startsWith(other)));
}

/**
 * The words whose index ranges a search reads. One word: that word. Several: every word's range is
 * probed in parallel (keys only, `WORD_PROBE_LIMIT` per slot); the words whose ranges ended are the
 * rare ones, and the search reads all of them (their union holds every markup that has one of them
 * among its indexed words, so a markup whose rare word is past its tenth is still found by another
 * rare word it indexes). When no range ended, every word is common: the longest drives.
 */
async function drivingPrefixes(workspaceId: string, candidates: string[]): Promise<string[]> {
  const words = outermost(candidates);
  if (words.length === 1) return words;
  const partition = workspaceWordsPartition(workspaceId);
  const slots = availableWordSlots();
  const probes = await Promise.all(
    words.map(async (word) => {
      const ranges = await Promise.all(
        slots.map(async (slot) => {
          const read = await queryWordSlot(slot, partition, word, `${word}${UPPER}`, { limit: WORD_PROBE_LIMIT, keysOnly: true });
          return { ended: !read?.more };
        }),
      );
      return { word, ended: ranges.every((range) => range.ended) };
    }),
  );
  const rare = probes.filter((probe) => probe.ended).map((probe) => probe.word);
  if (rare.length > 0) return rare;
  return [words.reduce((longest, word) => (word.length > longest.length ? word : longest))];
}

interface WordEntry {
  slot: number;
  sortKey: string;
  markupId: string;
}

interface SlotReader {
  slot: number;
  buffer: WordEntry[];
  /** The next Query's lower bound: the prefix, or just after the last key read. */
  from: string;
  /** Above every key of the prefix. */
  to: string;
  done: boolean;
}

/**
 * Above every word that starts with the prefix: U+10FFFF sorts after every character (UTF-8, and UTF-16 for the BMP letters NFKC leaves).
 */
const UPPER = '\u{10FFFF}';
/** Just after a key: sort keys end with the markup id, so nothing sorts between `key` and `key + NUL`. */
const JUST_AFTER = '\u0000';

/** DynamoDB orders string keys by their UTF-8 bytes; JavaScript's `<` by UTF-16 units. */
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Word slots whose index answered "does not exist" (or is still being built), skipped for a minute: a table upgraded one index at a time.
 */
const unavailableUntil = new Map<number, number>();

/** The word slots not known to be missing (or still building) right now. */
function availableWordSlots(): number[] {
  const now = Date.now();
  return Array.from({ length: WORD_SLOTS }, (_, i) => i + 1).filter((slot) => (unavailableUntil.get(slot) ?? 0) <= now);
}

/**
 * One Query of a word slot between `from` and `to` (inclusive): its items and whether more follow,
 * or undefined when the slot's index is missing or still building (then skipped for a minute).
 */
async function queryWordSlot(
  slot: number,
  partition: string,
  from: string,
  to: string,
  options: { limit: number; keysOnly?: boolean },
): Promise<{ items: Record<string, unknown>[]; more: boolean } | undefined> {
  const index = wordIndex(slot);
  try {
    const result = await getDb().send(
      new QueryCommand({
        TableName: getConfig().tableName,
        IndexName: index.name,
        // BETWEEN rather than begins_with: the same keys, and DynamoDB Local reads only them (begins_with walks the
        // partition from its start: 102 ms against 4 ms for a late word among 50,000 keys).
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
        ExpressionAttributeValues: { ':pk': partition, ':from': from, ':to': to },
        ...(options.keysOnly ? { ProjectionExpression: '#sk' } : {}),
        Limit: options.limit,
      }),
    );
    return { items: result.Items ?? [], more: result.LastEvaluatedKey !== undefined };
  } catch (error) {
    if (!isIndexUnavailable(error)) throw error;
    unavailableUntil.set(slot, Date.now() + 60_000);
    return undefined;
  }
}

async function searchWordIndex(
  workspaceId: string,
  options: { key: Buffer; list: string; queryWords: string[]; prefixes: string[]; limit: number; after?: string },
): Promise<SearchPage> {
  const { key, list, prefixes, limit, after } = options;
  const partition = workspaceWordsPartition(workspaceId);
  const slots = availableWordSlots();
  const readers: SlotReader[] = prefixes.flatMap((prefix) =>
    slots.map((slot) => {
      const from = after && byteOrder(after, prefix) >= 0 ? `${after}${JUST_AFTER}` : prefix;
      const to = `${prefix}${UPPER}`;
      return { slot, buffer: [], from, to, done: byteOrder(from, to) > 0 };
    }),
  );
  const pageSize = limit + 1;

  const fill = async (reader: SlotReader) => {
    const index = wordIndex(reader.slot);
    while (reader.buffer.length === 0 && !reader.done) {
      const read = await queryWordSlot(reader.slot, partition, reader.from, reader.to, { limit: pageSize });
      for (const item of read?.items ?? []) {
        reader.buffer.push({
          slot: reader.slot,
          sortKey: item[index.sortKey] as string,
          markupId: (item.PK as string).slice('ITEM#'.length),
        });
      }
      const last = reader.buffer.at(-1);
      if (last) reader.from = `${last.sortKey}${JUST_AFTER}`;
      reader.done = !read?.more;
    }
  };

  const matches: { record: MarkupRecord; sortKey: string }[] = [];
  let examined = 0;
  let lastExamined: WordEntry | undefined;
  let exhausted = false;
  while (matches.length <= limit) {
    await Promise.all(readers.map(fill));
    const live = readers.filter((reader) => reader.buffer.length > 0);
    if (live.length === 0) {
      exhausted = true;
      break;
    }
    // The budget is checked after reading on, so a page that spent it says hasMore only when entries are left.
    if (examined >= WORD_SEARCH_BUDGET) break;
    // Entries up to the smallest last entry of a slot that has more are in their final order.
    const open = readers.filter((reader) => !reader.done).map((reader) => reader.buffer.at(-1)!.sortKey);
    const frontier = open.length ? open.reduce((least, sortKey) => (byteOrder(sortKey, least) < 0 ? sortKey : least)) : undefined;
    const batch: WordEntry[] = [];
    for (const reader of live) {
      const taken =
        frontier === undefined ? reader.buffer.length : reader.buffer.findIndex((entry) => byteOrder(entry.sortKey, frontier) > 0);
      batch.push(...reader.buffer.splice(0, taken === -1 ? reader.buffer.length : taken));
    }
    batch.sort((a, b) => byteOrder(a.sortKey, b.sortKey));
    const records = new Map(
      (await getItems([...new Set(batch.map((entry) => entry.markupId))], true)).map((record) => [record.id, record]),
    );
    for (const entry of batch) {
      examined += 1;
      lastExamined = entry;
      const record = records.get(entry.markupId);
      if (record?.kind === 'markup' && isFirstMatch(record, entry, workspaceId, prefixes) && matchesWords(record, options.queryWords)) {
        matches.push({ record, sortKey: entry.sortKey });
        if (matches.length > limit) break;
      }
    }
    if (readers.every((reader) => reader.done && reader.buffer.length === 0) && matches.length <= limit) {
      exhausted = true;
      break;
    }
  }
  const page = matches.slice(0, limit);
  const items = page.map((match) => match.record);
  const cursorAt = (sortKey: string) => encodeCursor(key, list, { sortKey, prefixes });
  if (matches.length > limit) return { items, hasMore: true, nextCursor: cursorAt(page.at(-1)!.sortKey) };
  if (!exhausted && lastExamined) return { items, hasMore: true, nextCursor: cursorAt(lastExamined.sortKey) };
  return { items, hasMore: false, nextCursor: null };
}

/**
 * Whether this index entry is where the markup is listed: the markup is in the workspace, the entry
 * is its current key (an entry that lags a write is not), and of its indexed words that start with
 * a driving word this is the first in index order, so a markup with several such words is listed once.
 */
function isFirstMatch(record: MarkupRecord, entry: WordEntry, workspaceId: string, prefixes: readonly string[]): boolean {
  if (record.workspaceId !== workspaceId) return false;
  if (markupWordKeys(record)[wordIndex(entry.slot).sortKey] !== entry.sortKey) return false;
  const first = indexedWords(record)
    .filter((word) => prefixes.some((prefix) => word.startsWith(prefix)))
    .map((word) => `${word}${SORT_SEPARATOR}`)
    .reduce<string | undefined>((least, word) => (least === undefined || byteOrder(word, least) < 0 ? word : least), undefined);
  return first === `${wordOfSortKey(entry.sortKey)}${SORT_SEPARATOR}`;
}

/** A word cursor's position and driving words; 400 unless it was made for this workspace and query (the list binds both). */
function decodeWordCursor(
  key: Buffer,
  list: string,
  cursor: string,
  candidates: readonly string[],
): { sortKey: string; prefixes: string[] } {
  const position = decodeCursor(key, list, cursor, 'before');
  const { sortKey, prefixes } = position as { sortKey?: unknown; prefixes?: unknown };
  const valid =
    typeof sortKey === 'string' &&
    sortKey.includes(SORT_SEPARATOR) &&
    Array.isArray(prefixes) &&
    prefixes.length > 0 &&
    prefixes.every((prefix) => typeof prefix === 'string' && candidates.includes(prefix)) &&
    (prefixes as string[]).some((prefix) => sortKey.startsWith(prefix));
  if (!valid) throw new BadRequestError('before is not a valid cursor for this search.', 'invalid-cursor');
  return { sortKey, prefixes: prefixes as string[] };
}
