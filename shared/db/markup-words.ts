import { SORT_SEPARATOR } from './core/table.js';

/**
 * The markup word index (issue 34): what `GET /markups/search` finds in one request whatever the
 * workspace's size. A markup's words (name first, then its URL's parts) are index keys ON the
 * markup item, its n-th word in GSI(5+n), so every write of the markup (create, rename, a move that
 * changes its workspace, delete) keeps them in step in the same write, and bulk creation adds no
 * transaction item. Pure: key builders and the word rules; the Queries are in `markup-search.ts`.
 */

/** Word slots per markup: GSI6 to GSI15. Words past these are found only with a word that is indexed. */
export const WORD_SLOTS = 10;
/** The first GSI of the word index. */
const FIRST_WORD_INDEX = 6;
/** Longer words are indexed by their first 40 characters (a longer query word still matches: it is verified on the record). */
export const MAX_INDEXED_WORD_LENGTH = 40;
/** URL parts in nearly every webpage markup: not indexed (a query of only these reads the workspace's markups, where they are common). */
export const UNINDEXED_URL_WORDS: ReadonlySet<string> = new Set(['http', 'https', 'www']);

const WORD = /[\p{L}\p{N}]+/gu;

const MARK = /\p{M}/gu;

/**
 * A text folded for word matching, the same for stored and query words: lowercase, compatibility
 * forms decomposed (NFKD: `ﬁ` is `fi`, `Ａ` is `a`), combining marks dropped (`é` is `e`, and `İ`,
 * which lowercases to `i` and a combining dot, is `i`), `ß` is `ss`, then composed again (NFC).
 */
export function foldText(text: string): string {
  return text.normalize('NFKD').toLowerCase().normalize('NFKD').replace(MARK, '').replace(/ß/g, 'ss').normalize('NFC');
}

/** The words of a text: runs of letters and digits, folded (`foldText`). */
export function wordsOf(text: string): string[] {
  return foldText(text).match(WORD) ?? [];
}

function decodedUrl(url: string): string {
  try {
    return decodeURIComponent(url);
  } catch {
    return url;
  }
}

/** Every distinct word of a markup, the name's first, then the URL's (percent-escapes decoded). */
export function markupWords(markup: { name: string; url?: string }): string[] {
  return [...new Set([...wordsOf(markup.name), ...(markup.url ? wordsOf(decodedUrl(markup.url)) : [])])];
}

/**
 * The words a markup is indexed by, in slot order: the first `WORD_SLOTS` distinct ones but the
 * URL's scheme and `www`, each cut to `MAX_INDEXED_WORD_LENGTH`.
 */
export function indexedWords(markup: { name: string; url?: string }): string[] {
  const words = markupWords(markup).filter((word) => !UNINDEXED_URL_WORDS.has(word) || wordsOf(markup.name).includes(word));
  return [...new Set(words.map((word) => word.slice(0, MAX_INDEXED_WORD_LENGTH)))].slice(0, WORD_SLOTS);
}

/** The partition key attribute every word slot's index shares: one copy on the item, not ten. */
export const WORD_PARTITION_ATTRIBUTE = 'GSIWPK';

/** Slot n's index (1-based): its name and key attributes. */
export function wordIndex(slot: number): { name: string; partitionKey: string; sortKey: string } {
  const n = FIRST_WORD_INDEX + slot - 1;
  return { name: `GSI${n}`, partitionKey: WORD_PARTITION_ATTRIBUTE, sortKey: `GSI${n}SK` };
}

/** Every word-index key attribute name (for `fromItem`, which leaves index keys out of records). */
export const WORD_KEY_ATTRIBUTES: readonly string[] = [
  WORD_PARTITION_ATTRIBUTE,
  ...Array.from({ length: WORD_SLOTS }, (_, i) => wordIndex(i + 1).sortKey),
];

export const workspaceWordsPartition = (workspaceId: string) => `WS#${workspaceId}#WORDS`;

/** Creation time, newest first: a word's markups sort newest first within the word. */
const newestFirst = (createdAt: number) => String(999_999_999_999_999 - createdAt).padStart(15, '0');

/** A word slot's sort key: `<word>\u0001<inverted createdAt>\u0001<markupId>`; the word sorts before its longer neighbours. */
export const wordSortKey = (word: string, createdAt: number, markupId: string) =>
  `${word}${SORT_SEPARATOR}${newestFirst(createdAt)}${SORT_SEPARATOR}${markupId}`;

/** The word of a word slot's sort key. */
export const wordOfSortKey = (sortKey: string) => sortKey.slice(0, sortKey.indexOf(SORT_SEPARATOR));

/** The word index keys of a markup, derived from its fields like every index key (`itemIndexKeys`). */
export function markupWordKeys(markup: {
  id: string;
  workspaceId: string;
  name: string;
  url?: string;
  createdAt: number;
}): Record<string, string> {
  const words = indexedWords(markup);
  if (words.length === 0) return {};
  const keys: Record<string, string> = { [WORD_PARTITION_ATTRIBUTE]: workspaceWordsPartition(markup.workspaceId) };
  words.forEach((word, i) => (keys[wordIndex(i + 1).sortKey] = wordSortKey(word, markup.createdAt, markup.id)));
  return keys;
}

/**
 * Whether a markup matches a search's words: each is the start of one of its words (name or URL,
 * every word, indexed or not). This is what the index answers; the search checks it again on the
 * record it read, so an index entry that lags a write never returns a markup that no longer matches.
 */
export function matchesWords(markup: { name: string; url?: string }, queryWords: readonly string[]): boolean {
  const words = markupWords(markup);
  return queryWords.every((queryWord) => words.some((word) => word.startsWith(queryWord)));
}
