import { createHash } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { isIndexUnavailable } from './errors.js';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import { BadRequestError } from '../http/errors.js';
import { getCursorKey } from './cursor-keys.js';
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
import { SORT_SEPARATOR } from './table.js';

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
 * `https`, `www`, which nearly every webpage markup holds, so matches come early). It queries the workspace's markup index (GSI4) with a filter on the lowercase
 * `searchText` attribute and keeps reading until it holds `limit + 1` matches (so `hasMore` is
 * exact), the partition ends, or the read budget is spent (then `hasMore` is true and the cursor
 * continues from where reading stopped). Never a Scan.
 */
export async function scanWorkspaceMarkups(workspaceId: string, options: { text: string; limit: number; before?: string }): Promise<SearchPage> {
  const needle = options.text.trim().toLowerCase();
  const partition = workspaceMarkupsPartition(workspaceId);
  const list = `markups:search:${createHash('sha256').update(needle).digest('base64url').slice(0, 16)}`;
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

/**
 * GET /markups/search: markups of the workspace whose name or URL has, for every word of the query,
 * a word starting with it (case-insensitive; `markupWords`). The longest query word is looked up in
 * the word index (every slot, `begins_with`, in parallel), the other words are checked on the
 * records. Queries without an indexed word fall back to `scanWorkspaceMarkups`.
 */
export async function searchWorkspaceMarkups(workspaceId: string, options: { text: string; limit: number; before?: string }): Promise<SearchPage> {
  const queryWords = wordsOf(options.text);
  const candidates = queryWords.filter((word) => !UNINDEXED_URL_WORDS.has(word));
  if (candidates.length === 0) return scanWorkspaceMarkups(workspaceId, options);
  const driving = candidates.reduce((longest, word) => (word.length > longest.length ? word : longest));
  return searchWordIndex(workspaceId, { queryWords, prefix: driving.slice(0, MAX_INDEXED_WORD_LENGTH), limit: options.limit, before: options.before });
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
  done: boolean;
}

/** Above every word that starts with the prefix: U+10FFFF sorts after every character (UTF-8, and UTF-16 for the BMP letters NFKC leaves). */
const UPPER = '\u{10FFFF}';
/** Just after a key: sort keys end with the markup id, so nothing sorts between `key` and `key + NUL`. */
const JUST_AFTER = '\u0000';

/** DynamoDB orders string keys by their UTF-8 bytes; JavaScript's `<` by UTF-16 units. */
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Word slots whose index answered "does not exist" (or is still being built), skipped for a minute: a table upgraded one index at a time. */
const unavailableUntil = new Map<number, number>();

async function searchWordIndex(
  workspaceId: string,
  options: { queryWords: string[]; prefix: string; limit: number; before?: string },
): Promise<SearchPage> {
  const { prefix, limit } = options;
  const partition = workspaceWordsPartition(workspaceId);
  const list = `markups:words:${createHash('sha256').update(options.queryWords.join(' ')).digest('base64url').slice(0, 16)}`;
  const key = await getCursorKey();
  const after = options.before ? decodeWordCursor(key, list, options.before, prefix) : undefined;
  const now = Date.now();
  const readers: SlotReader[] = Array.from({ length: WORD_SLOTS }, (_, i) => i + 1)
    .filter((slot) => (unavailableUntil.get(slot) ?? 0) <= now)
    .map((slot) => ({ slot, buffer: [], from: after ? `${after}${JUST_AFTER}` : prefix, done: false }));
  const pageSize = limit + 1;

  const fill = async (reader: SlotReader) => {
    const index = wordIndex(reader.slot);
    while (reader.buffer.length === 0 && !reader.done) {
      try {
        const result = await getDb().send(
          new QueryCommand({
            TableName: getConfig().tableName,
            IndexName: index.name,
            // BETWEEN rather than begins_with: the same keys, and DynamoDB Local reads only them (begins_with walks the
            // partition from its start: 102 ms against 4 ms for a late word among 50,000 keys).
            KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
            ExpressionAttributeValues: { ':pk': partition, ':from': reader.from, ':to': `${prefix}${UPPER}` },
            Limit: pageSize,
          }),
        );
        for (const item of result.Items ?? []) {
          reader.buffer.push({ slot: reader.slot, sortKey: item[index.sortKey] as string, markupId: (item.PK as string).slice('ITEM#'.length) });
        }
        const last = reader.buffer.at(-1);
        if (last) reader.from = `${last.sortKey}${JUST_AFTER}`;
        reader.done = !result.LastEvaluatedKey;
      } catch (error) {
        if (!isIndexUnavailable(error)) throw error;
        unavailableUntil.set(reader.slot, Date.now() + 60_000);
        reader.done = true;
      }
    }
  };

  const matches: { record: MarkupRecord; sortKey: string }[] = [];
  let examined = 0;
  let lastExamined: WordEntry | undefined;
  let exhausted = false;
  while (matches.length <= limit) {
    if (examined >= WORD_SEARCH_BUDGET) break;
    await Promise.all(readers.map(fill));
    const live = readers.filter((reader) => reader.buffer.length > 0);
    if (live.length === 0) {
      exhausted = true;
      break;
    }
    // Entries up to the smallest last entry of a slot that has more are in their final order.
    const open = readers.filter((reader) => !reader.done).map((reader) => reader.buffer.at(-1)!.sortKey);
    const frontier = open.length ? open.reduce((least, sortKey) => (byteOrder(sortKey, least) < 0 ? sortKey : least)) : undefined;
    const batch: WordEntry[] = [];
    for (const reader of live) {
      const taken = frontier === undefined ? reader.buffer.length : reader.buffer.findIndex((entry) => byteOrder(entry.sortKey, frontier) > 0);
      batch.push(...reader.buffer.splice(0, taken === -1 ? reader.buffer.length : taken));
    }
    batch.sort((a, b) => byteOrder(a.sortKey, b.sortKey));
    const records = new Map((await getItems([...new Set(batch.map((entry) => entry.markupId))], true)).map((record) => [record.id, record]));
    for (const entry of batch) {
      examined += 1;
      lastExamined = entry;
      const record = records.get(entry.markupId);
      if (record?.kind === 'markup' && isFirstMatch(record, entry, workspaceId, prefix) && matchesWords(record, options.queryWords)) {
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
  const cursorAt = (sortKey: string) => encodeCursor(key, list, { sortKey, prefix });
  if (matches.length > limit) return { items, hasMore: true, nextCursor: cursorAt(page.at(-1)!.sortKey) };
  if (!exhausted && lastExamined) return { items, hasMore: true, nextCursor: cursorAt(lastExamined.sortKey) };
  return { items, hasMore: false, nextCursor: null };
}

/**
 * Whether this index entry is where the markup is listed: the markup is in the workspace, the entry
 * is its current key (an entry that lags a write is not), and of its indexed words that start with
 * the prefix this is the first in index order, so a markup with several such words is listed once.
 */
function isFirstMatch(record: MarkupRecord, entry: WordEntry, workspaceId: string, prefix: string): boolean {
  if (record.workspaceId !== workspaceId) return false;
  if (markupWordKeys(record)[wordIndex(entry.slot).sortKey] !== entry.sortKey) return false;
  const first = indexedWords(record)
    .filter((word) => word.startsWith(prefix))
    .map((word) => `${word}${SORT_SEPARATOR}`)
    .reduce<string | undefined>((least, word) => (least === undefined || byteOrder(word, least) < 0 ? word : least), undefined);
  return first === `${wordOfSortKey(entry.sortKey)}${SORT_SEPARATOR}`;
}

function decodeWordCursor(key: Buffer, list: string, cursor: string, prefix: string): string {
  const position = decodeCursor(key, list, cursor, 'before');
  const sortKey = position.sortKey;
  if (typeof sortKey !== 'string' || position.prefix !== prefix || !sortKey.startsWith(prefix) || !sortKey.includes(SORT_SEPARATOR)) {
    throw new BadRequestError('before is not a valid cursor for this search.', 'invalid-cursor');
  }
  return sortKey;
}
