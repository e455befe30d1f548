import { selectorFor } from './selector.js';

/**
 * The anchor of a pinned element (DESIGN.md "Embeddable client", extension field `anchor`): W3C Web
 * Annotation selectors, tried in order when the page is loaded again. A CSS selector (a
 * CssSelector), the element's text with a little text before and after it (a TextQuoteSelector)
 * and where that text lies in the page's text (a TextPositionSelector).
 *
 * An element is placed only on good evidence: the CSS selector's element must still carry the
 * quoted text (or nearly: an edit); where that text is on the page more than once, the text around
 * each place and its distance from where it was decide, and two places that fit about as well
 * place neither. Anything less leaves the thread unanchored, never on a look-alike.
 */
export interface Anchor {
  css: string;
  textQuote?: { exact: string; prefix?: string; suffix?: string };
  textPosition?: { start: number; end: number };
}

const QUOTE_MAX = 2048;
const CONTEXT = 32;
/** How alike the CSS selector's element's text must be to the quoted text (0..1) for it to count. */
export const TEXT_THRESHOLD = 0.8;
/** A quoted text at least this long (whitespace collapsed) is taken to be unique evidence of its element. */
const DISTINCTIVE = 12;
/** How well one side of the text around an edited element must still fit. */
const SIDE_THRESHOLD = 0.5;
/** How well the text around a short text match (one side), or around a much-edited element (both sides), must fit. */
const SIDES_THRESHOLD = 0.8;
/** How many places with the quoted text are compared at most. */
const MAX_SCORED = 6;
/** The least lead the best of several places with the quoted text needs over the next. */
const MARGIN = 0.2;

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * The page's text, read once for many lookups: its text nodes in document order with where each
 * starts in `document.body.textContent` (the client's own shadow root is not in the light DOM).
 */
export interface PageText {
  body: string;
  nodes: Text[];
  starts: Map<Text, number>;
  /** Each node's text, whitespace collapsed (made on first use). */
  normalized?: string[];
  /** The body's text, whitespace collapsed (made on first use). */
  flat?: string;
}

export function readPageText(): PageText {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  const starts = new Map<Text, number>();
  let offset = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node as Text;
    nodes.push(text);
    starts.set(text, offset);
    offset += text.data.length;
  }
  return { body: document.body.textContent ?? '', nodes, starts };
}

/** Where `element`'s text starts in the body's text, or undefined when it has none. */
function textStart(element: Element, page: PageText): number | undefined {
  const first = document.createTreeWalker(element, NodeFilter.SHOW_TEXT).nextNode();
  return first ? page.starts.get(first as Text) : undefined;
}

export function anchorOf(element: Element): Anchor {
  const anchor: Anchor = { css: selectorFor(element) };
  const text = element.textContent ?? '';
  if (!normalize(text) || !document.body.contains(element)) return anchor;
  const page = readPageText();
  const start = textStart(element, page);
  if (start === undefined) return anchor;
  const end = start + text.length;
  anchor.textQuote = { exact: text.slice(0, QUOTE_MAX), prefix: page.body.slice(Math.max(0, start - CONTEXT), start), suffix: page.body.slice(end, end + CONTEXT) };
  anchor.textPosition = { start, end };
  return anchor;
}

/** How alike two texts are, 0..1 (1 - Levenshtein distance / longer length), on their first 256 characters, whitespace collapsed. */
export function similarity(a: string, b: string): number {
  const x = normalize(a).slice(0, 256);
  const y = normalize(b).slice(0, 256);
  if (x === y) return 1; // whitespace on both sides (the element ends its container) fits too
  if (!x.length || !y.length) return 0;
  // Too different in length to reach any threshold used here: not worth the table.
  if (Math.min(x.length, y.length) / Math.max(x.length, y.length) < 0.5) return Math.min(x.length, y.length) / Math.max(x.length, y.length) / 2;
  // One row of the Levenshtein table at a time, in one reused buffer.
  const row = new Uint16Array(y.length + 1);
  for (let j = 0; j <= y.length; j += 1) row[j] = j;
  for (let i = 1; i <= x.length; i += 1) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= y.length; j += 1) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (x.charCodeAt(i - 1) === y.charCodeAt(j - 1) ? 0 : 1));
      diagonal = above;
    }
  }
  return 1 - row[y.length]! / Math.max(x.length, y.length);
}

const query = (selector: string): Element[] => {
  try {
    return [...document.querySelectorAll(selector)];
  } catch {
    return [];
  }
};

/** What a thread knows of its element: the extension anchor, and the spec's element path. */
export interface Anchored {
  anchor?: Anchor | null;
  elements?: { path?: string }[];
}

export interface Located {
  element: Element;
  /** 0..1: how sure the placement is. */
  confidence: number;
  /** Which selector found it. */
  by: 'css' | 'textQuote';
}

/** The element name the CSS selector ends with (`p` of `main > p:nth-of-type(2)`), if it names one. */
export function tagOf(css: string | undefined): string | undefined {
  return css ? /(?:^|[\s>+~])([a-zA-Z][\w-]*)(?:[.:#[][^\s>+~]*)?$/.exec(css.trim())?.[1]?.toLowerCase() : undefined;
}

/** How often `wanted` occurs in the page's text, whitespace collapsed (2 means "more than once"). */
function occurrences(wanted: string, page: PageText): number {
  page.flat ??= normalize(page.body);
  const first = page.flat.indexOf(wanted);
  if (first < 0) return 0;
  return page.flat.indexOf(wanted, first + 1) < 0 ? 1 : 2;
}

/**
 * Each place the quoted text is the whole text of an element (of the element name `tag`, when
 * known): of the elements there whose text it is, the one of that name, else the innermost.
 */
function quoteCandidates(exact: string, page: PageText, tag: string | undefined): Element[] {
  const wanted = normalize(exact);
  if (!wanted) return [];
  page.normalized ??= page.nodes.map((node) => normalize(node.data));
  const found = new Set<Element>();
  page.nodes.forEach((node, index) => {
    const data = page.normalized![index]!;
    if (!data || !wanted.includes(data)) return;
    let match: Element | undefined;
    for (let element = node.parentElement; element && element !== document.body; element = element.parentElement) {
      const text = normalize(element.textContent ?? '');
      if (text.length > wanted.length) break;
      if (text !== wanted) continue;
      if (!tag || element.localName === tag) {
        match = element;
        if (tag) break;
      }
      match ??= element;
    }
    if (match && (!tag || match.localName === tag)) found.add(match);
  });
  return [...found];
}

/** How well the text before and after `element` fits the quote's prefix and suffix (0..1 each, 1 where the quote has none), and how near it is to where it was (0..1). */
function contextOf(element: Element, quote: NonNullable<Anchor['textQuote']>, position: Anchor['textPosition'], page: PageText): { before: number; after: number; near: number } {
  const start = textStart(element, page);
  if (start === undefined) return { before: 0, after: 0, near: 0 };
  const end = start + (element.textContent ?? '').length;
  const before = quote.prefix !== undefined ? similarity(page.body.slice(Math.max(0, start - quote.prefix.length), start), quote.prefix) : 1;
  const after = quote.suffix !== undefined ? similarity(page.body.slice(end, end + quote.suffix.length), quote.suffix) : 1;
  const near = position ? 1 / (1 + Math.abs(start - position.start) / 1000) : 0;
  return { before, after, near };
}

/**
 * Finds the thread's element (see the module's comment); undefined: unanchored. `page` is the
 * page's text read once for a batch of threads (read here when not given). In order:
 * 1. the CSS selector's one element, with the quoted text, which is nowhere else on the page;
 * 2. that element with its text edited: nearly the same text where the text around it fits on one
 *    side, or somewhat alike text where it fits on both (an element removed leaves the selector on
 *    its neighbour, whose surroundings differ on one side at least);
 * 3. the one element (of the selector's element name) whose whole text is the quote: taken when
 *    the text is long enough to be its own evidence, else when one side of it still fits;
 * 4. several such elements: the one whose surroundings and position fit clearly best, else none.
 */
export function locate(thread: Anchored, page?: PageText): Located | undefined {
  const anchor = thread.anchor ?? undefined;
  const css = anchor?.css ?? thread.elements?.[0]?.path;
  const matches = css ? query(css) : [];
  const byCss = matches.length === 1 ? matches[0] : undefined;
  const quote = anchor?.textQuote;
  // No text to go by (an image, an empty box): the selector alone.
  if (!quote || !normalize(quote.exact)) return byCss ? { element: byCss, confidence: anchor ? 0.9 : 0.7, by: 'css' } : undefined;

  const text = page ?? readPageText();
  const wanted = normalize(quote.exact);
  const cssText = byCss ? normalize(byCss.textContent ?? '') : undefined;
  if (byCss && cssText === wanted && occurrences(wanted, text) === 1) return { element: byCss, confidence: 1, by: 'css' };
  const candidates = quoteCandidates(quote.exact, text, tagOf(css));
  if (byCss && cssText !== wanted && candidates.length === 0) {
    const alike = similarity(cssText!, wanted);
    const { before, after } = contextOf(byCss, quote, anchor?.textPosition, text);
    if ((alike >= TEXT_THRESHOLD && Math.max(before, after) >= SIDE_THRESHOLD) || (alike >= 0.5 && Math.min(before, after) >= SIDES_THRESHOLD)) return { element: byCss, confidence: alike, by: 'css' };
    return undefined;
  }
  if (candidates.length === 0) return undefined;
  if (candidates.length === 1) {
    const { before, after } = contextOf(candidates[0]!, quote, anchor?.textPosition, text);
    if (wanted.length >= DISTINCTIVE || Math.max(before, after) >= SIDES_THRESHOLD) return { element: candidates[0]!, confidence: 0.85, by: candidates[0] === byCss ? 'css' : 'textQuote' };
    return undefined;
  }
  // The text is on the page more than once: the surroundings, the old position and the selector decide
  // (among the places nearest the old position and the selector's element: bounded work on pages that repeat a text often).
  const start = anchor?.textPosition?.start;
  const nearest = start === undefined || candidates.length <= MAX_SCORED ? candidates : [...candidates].sort((a, b) => Math.abs((textStart(a, text) ?? 0) - start) - Math.abs((textStart(b, text) ?? 0) - start)).slice(0, MAX_SCORED);
  if (byCss && candidates.includes(byCss) && !nearest.includes(byCss)) nearest.push(byCss);
  const scored = nearest
    .map((element) => {
      const { before, after, near } = contextOf(element, quote, anchor?.textPosition, text);
      return { element, sides: (before + after) / 2, score: (before + after) / 2 + near / 2 + (element === byCss ? 0.25 : 0) };
    })
    .sort((a, b) => b.score - a.score);
  // Better than the others is not enough: its own surroundings must still be the quote's.
  if (scored[0]!.score - scored[1]!.score < MARGIN || (scored[0]!.sides < SIDES_THRESHOLD && scored[0]!.element !== byCss)) return undefined;
  return { element: scored[0]!.element, confidence: Math.min(0.95, scored[0]!.score / 1.75), by: scored[0]!.element === byCss ? 'css' : 'textQuote' };
}

/** Every thread's element, reading the page's text once. */
export function locateAll<T extends Anchored & { id: string }>(threads: readonly T[]): Map<string, Located | undefined> {
  const page = threads.length ? readPageText() : undefined;
  return new Map(threads.map((thread) => [thread.id, locate(thread, page)]));
}
