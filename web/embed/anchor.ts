import { selectorFor } from './selector.js';

/**
 * The anchor of a pinned element (DESIGN.md "Embeddable client", extension field `anchor`): W3C Web
 * Annotation selectors, tried in order when the page is loaded again. A CSS selector (a
 * CssSelector), the element's text with a little text before and after it (a TextQuoteSelector)
 * and where that text lies in the page's text (a TextPositionSelector). An element is placed only
 * when the evidence is good enough: the CSS selector's element must still carry the quoted text,
 * and a text search must find one best candidate; anything less leaves the thread unanchored,
 * never on a look-alike.
 */
export interface Anchor {
  css: string;
  textQuote?: { exact: string; prefix?: string; suffix?: string };
  textPosition?: { start: number; end: number };
}

const QUOTE_MAX = 2048;
const CONTEXT = 32;
/** How alike the found text must be to the quoted text (0..1) for the CSS selector's element to count. */
export const TEXT_THRESHOLD = 0.8;

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

/** The page's text nodes in document order (the client's own shadow root is not in the light DOM). */
function textNodes(root: Node): Text[] {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node as Text);
  return nodes;
}

/** Where `element`'s text starts in the body's text (its `textContent`), or undefined when it has none. */
function textStart(element: Element): number | undefined {
  let offset = 0;
  for (const node of textNodes(document.body)) {
    if (element.contains(node)) return offset;
    offset += node.data.length;
  }
  return undefined;
}

export function anchorOf(element: Element): Anchor {
  const anchor: Anchor = { css: selectorFor(element) };
  const text = element.textContent ?? '';
  if (!normalize(text) || !document.body.contains(element)) return anchor;
  const start = textStart(element);
  if (start === undefined) return anchor;
  const body = document.body.textContent ?? '';
  const exact = text.slice(0, QUOTE_MAX);
  anchor.textQuote = { exact, prefix: body.slice(Math.max(0, start - CONTEXT), start), suffix: body.slice(start + text.length, start + text.length + CONTEXT) };
  anchor.textPosition = { start, end: start + text.length };
  return anchor;
}

/** How alike two texts are, 0..1 (1 - Levenshtein distance / longer length), on their first 256 characters. */
export function similarity(a: string, b: string): number {
  const x = normalize(a).slice(0, 256);
  const y = normalize(b).slice(0, 256);
  if (x === y) return 1; // whitespace on both sides (the element ends its container) fits too
  if (!x.length || !y.length) return 0;
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index);
  for (let i = 1; i <= x.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= y.length; j += 1) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    previous = row;
  }
  return 1 - previous[y.length]! / Math.max(x.length, y.length);
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

/** The smallest element holding exactly the quoted text, for each place the text occurs. */
function quoteCandidates(exact: string): Element[] {
  const wanted = normalize(exact);
  if (!wanted) return [];
  const found = new Set<Element>();
  for (const node of textNodes(document.body)) {
    if (!normalize(node.data) || !wanted.includes(normalize(node.data).slice(0, 40))) continue;
    // Climb to the first ancestor whose whole text is the quote.
    for (let element = node.parentElement; element && element !== document.body; element = element.parentElement) {
      const text = normalize(element.textContent ?? '');
      if (text === wanted) {
        found.add(element);
        break;
      }
      if (text.length > wanted.length) break;
    }
  }
  // One candidate per place: of nested elements with the same text (a <p> and its only <span>), the outermost.
  return [...found].filter((element) => ![...found].some((other) => other !== element && other.contains(element)));
}

/** How well the text around `element` fits the quote's prefix or suffix (0..1, 1 without either), and how near it is to where it was (0..1). */
function contextOf(element: Element, quote: NonNullable<Anchor['textQuote']>, position: Anchor['textPosition']): { context: number; near: number } {
  const start = textStart(element);
  if (start === undefined) return { context: 0, near: 0 };
  const body = document.body.textContent ?? '';
  const end = start + (element.textContent ?? '').length;
  // The better of the two sides: an element inserted just before (or after) changes one side only.
  const sides: number[] = [];
  if (quote.prefix !== undefined) sides.push(similarity(body.slice(Math.max(0, start - quote.prefix.length), start), quote.prefix));
  if (quote.suffix !== undefined) sides.push(similarity(body.slice(end, end + quote.suffix.length), quote.suffix));
  const context = sides.length ? Math.max(...sides) : 1;
  const near = position ? 1 / (1 + Math.abs(start - position.start) / 1000) : 0;
  return { context, near };
}

/** How much of the quote's surrounding text must still surround a text match for it to be placed. */
export const CONTEXT_THRESHOLD = 0.5;
/** `near` of a text match within about 250 characters of where the quote was. */
const NEAR_THRESHOLD = 0.8;

/**
 * Finds the thread's element: the CSS selector (the anchor's, else the element path) when it
 * resolves to one element that still carries the quoted text; else the one element whose text is
 * the quote and whose surrounding text still fits, when no other fits as well. Undefined: unanchored.
 */
export function locate(thread: Anchored): Located | undefined {
  const anchor = thread.anchor ?? undefined;
  const css = anchor?.css ?? thread.elements?.[0]?.path;
  const quote = anchor?.textQuote;
  if (css) {
    const matches = query(css);
    if (matches.length === 1) {
      const element = matches[0]!;
      if (!quote) return { element, confidence: anchor ? 0.9 : 0.7, by: 'css' };
      const alike = similarity(element.textContent ?? '', quote.exact);
      if (alike >= TEXT_THRESHOLD) return { element, confidence: alike, by: 'css' };
    }
  }
  if (!quote) return undefined;
  const scored = quoteCandidates(quote.exact)
    .map((element) => ({ element, ...contextOf(element, quote, anchor?.textPosition) }))
    // Its surroundings still fit on one side, or it is still about where it was (within ~250 characters).
    .filter((candidate) => candidate.context >= CONTEXT_THRESHOLD || candidate.near >= NEAR_THRESHOLD)
    .map((candidate) => ({ ...candidate, score: candidate.context + candidate.near / 4 }))
    .sort((a, b) => b.score - a.score);
  if (scored.length === 0) return undefined;
  // Two places that fit about equally well: no telling which was meant, so neither.
  if (scored.length > 1 && scored[0]!.score - scored[1]!.score < 0.2) return undefined;
  return { element: scored[0]!.element, confidence: Math.min(0.95, Math.max(scored[0]!.context, scored[0]!.near)), by: 'textQuote' };
}
