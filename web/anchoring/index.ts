import search from 'approx-string-match';
import { className, finder, idName } from '@medv/finder';
import { buildPageText, elementsHolding, gapElements, rangeOf, type PageText, type TextRange } from './page-text.js';
import { agreement, choose, contextSimilarity, quoteSimilarity, scoreOf, type Contender, type Evidence } from './score.js';

/**
 * Anchoring for the embeddable client (issue 31 part 3): describe a commented element so that it
 * can be found again after the customer's page changed, and find it. No UI and no API calls.
 *
 * An anchor holds three W3C Web Annotation selectors, tried in order: a CSS selector, the
 * element's text with the text before and after it (TextQuoteSelector), and where that text lies
 * in the page text (TextPositionSelector; see page-text.ts). Every candidate any of them yields is
 * scored (score.ts), and a thread is placed only on a candidate that is clearly the best; otherwise
 * it is unanchored.
 */
export { buildPageText, type PageText } from './page-text.js';
export { normaliseText } from './text.js';

export interface Anchor {
  css: string;
  textQuote?: { exact: string; prefix?: string; suffix?: string };
  textPosition?: { start: number; end: number };
}

export interface Located {
  element: Element;
  /** 0 to 1; only candidates that pass the rules are answered, so this is at least THRESHOLD. */
  confidence: number;
  /** Which selector found it: 'css' (the selector named it, and its text agrees) or 'textQuote'. */
  by: 'css' | 'textQuote';
}

export interface StoredAnchor {
  elementPath?: string;
  anchor?: Anchor | null;
}

/** Bounds of what an anchor stores (the API accepts a quote of 2048, context of 256 characters). */
export const MAX_QUOTE = 256;
export const CONTEXT = 64;
/** Quotes at least this long are told apart from others by their text alone. */
const DISTINCTIVE = 24;
/**
 * Occurrences of a quote looked at closely (of at most five times as many found), and characters around the stored position searched first
 * for an edited one.
 */
const MAX_OCCURRENCES = 8;
const NEAR = 20_000;
/** The whole page is searched for an edited quote only up to this many characters. */
const MAX_FUZZY_TEXT = 300_000;

/**
 * Attributes a selector may use: the ones people set on purpose (test ids, roles, names, labels,
 * an image's alt text, links). Ids and classes go through finder's own test, which keeps word-like names and leaves out
 * generated ones (hashes, counters: anything with a digit or a run of consonants).
 */
const STABLE_ATTRIBUTES = new Set([
  'role',
  'name',
  'aria-label',
  'alt',
  'title',
  'placeholder',
  'rel',
  'href',
  'data-testid',
  'data-test',
  'data-test-id',
  'data-qa',
  'data-cy',
  'itemprop',
  'for',
  'type',
]);

function attributeAllowed(name: string, value: string): boolean {
  if (!value || value.length > 100 || /^data-(bench|review-board)/.test(name)) return false;
  if (!STABLE_ATTRIBUTES.has(name) && !(name.startsWith('data-') && idName(name.slice(5)))) return false;
  return !/[\n"\\]/.test(value) && !/^[\da-f-]{16,}$|\d{3,}/i.test(value);
}

/** The selector's last compound (the element's own part) and its tag, if it names one. */
function ownPart(css: string): { compound: string; tag: string | undefined } {
  // The last combinator outside brackets, quotes and escapes (an alt text may hold an escaped space).
  let start = 0;
  let depth = 0;
  let quote = '';
  for (let index = 0; index < css.length; index += 1) {
    const char = css[index]!;
    if (char === '\\') index += 1;
    else if (quote) quote = char === quote ? '' : quote;
    else if (char === '"' || char === "'") quote = char;
    else if (char === '[' || char === '(') depth += 1;
    else if (char === ']' || char === ')') depth -= 1;
    else if (depth === 0 && /[\s>+~]/.test(char)) start = index + 1;
  }
  const compound = css.slice(start).trim();
  return { compound, tag: /^[a-z][a-z0-9-]*/i.exec(compound)?.[0].toLowerCase() };
}

/** A CSS selector that `document.querySelector` resolves to exactly `element`, its own part naming the tag. */
export function selectorOf(element: Element): string {
  const document = element.ownerDocument;
  let css: string;
  try {
    css = finder(element, { root: document.body, idName, className, attr: attributeAllowed, timeoutMs: 200, maxNumberOfPathChecks: 2_000 });
  } catch {
    css = pathOf(element);
  }
  const { compound, tag } = ownPart(css);
  if (!tag) {
    const tagged = `${css.slice(0, css.length - compound.length)}${element.localName}${compound}`;
    if (document.querySelector(tagged) === element) css = tagged;
  }
  return document.querySelector(css) === element ? css : pathOf(element);
}

/** The positional path from the root, for when finder cannot answer. */
function pathOf(element: Element): string {
  const parts: string[] = [];
  for (let current: Element | null = element; current && current.localName !== 'html'; current = current.parentElement) {
    let index = 1;
    for (let sibling = current.previousElementSibling; sibling; sibling = sibling.previousElementSibling)
      if (sibling.localName === current.localName) index += 1;
    parts.unshift(`${current.localName}:nth-of-type(${index})`);
  }
  return `html > ${parts.join(' > ')}`;
}

/**
 * What a thread stores of the element it is pinned to: `elementPath` (DESIGN.md: a selector
 * `document.querySelector` resolves to exactly that element) and `anchor` (the same selector, the
 * element's text, cut at MAX_QUOTE characters, with CONTEXT characters of page text on each side,
 * and where its whole text lies in the page text). `page` may be passed when several elements are
 * described at once.
 */
export function describeElement(
  element: Element,
  page: PageText = buildPageText(element.ownerDocument),
): { elementPath: string; anchor: Anchor } {
  const css = selectorOf(element);
  const range = rangeOf(page, element);
  const exact = page.text.slice(range.start, Math.min(range.end, range.start + MAX_QUOTE));
  const prefix = page.text.slice(Math.max(0, range.start - CONTEXT), range.start);
  const suffix = page.text.slice(range.end, range.end + CONTEXT);
  // An element without text among others of its tag between the same two texts (a row of images
  // without alt text) is told apart by its selector's positions only: it keeps no context, so it
  // is never placed by positions on a changed page, where one of the row may have gone.
  const lookAlikes = !exact && /:nth-/.test(css) && gapElements(page, range.start, element.localName).length > 1;
  // Every field of the contract's shape (DESIGN.md), empty where the page has no text there or the
  // element keeps no context; an empty context is read as none (`contextSimilarity`).
  const textQuote: NonNullable<Anchor['textQuote']> = {
    exact,
    prefix: lookAlikes ? '' : prefix,
    suffix: lookAlikes ? '' : suffix,
  };
  return { elementPath: css, anchor: { css, textQuote, textPosition: { start: range.start, end: range.end } } };
}

interface Candidate extends Contender {
  element: Element;
  range: TextRange;
  by: Located['by'];
}

/** A selector may be stale or hostile: an invalid one or one naming several elements names none. */
function uniqueMatch(document: Document, css: string | undefined): Element | undefined {
  if (!css) return undefined;
  try {
    const found = document.querySelectorAll(css);
    return found.length === 1 ? found[0] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Finds the elements of many threads in one pass over the page (one page text for all): what the
 * client runs on load, after DOM changes and after history navigation. Answers, thread by thread,
 * the element with its confidence and the selector that found it, or undefined (unanchored).
 */
export function locateAll(document: Document, stored: readonly StoredAnchor[]): (Located | undefined)[] {
  const page = buildPageText(document);
  return stored.map((one) => locateIn(document, page, one));
}

/** One thread's element (see locateAll). */
export function locate(document: Document, stored: StoredAnchor): Located | undefined {
  return locateAll(document, [stored])[0];
}

function locateIn(document: Document, page: PageText, stored: StoredAnchor): Located | undefined {
  const css = stored.anchor?.css ?? stored.elementPath;
  const quote = stored.anchor?.textQuote;
  const position = stored.anchor?.textPosition;
  const exact = quote?.exact ?? '';
  const storedLength = position ? Math.max(position.end - position.start, exact.length) : exact.length;
  const { compound, tag } = ownPart(css ?? '');
  const selected = uniqueMatch(document, css) ?? (stored.elementPath !== css ? uniqueMatch(document, stored.elementPath) : undefined);
  const stable = css !== undefined && !/:nth-/.test(css);

  const prefix = quote?.prefix ?? '';
  const suffix = quote?.suffix ?? '';
  let onPage: { prefix: boolean; suffix: boolean } | undefined;
  const stillOnPage = () => (onPage ??= { prefix: occurs(page.text, prefix.trimEnd()), suffix: occurs(page.text, suffix.trimStart()) });
  const evaluate = (element: Element, range: TextRange, by: Located['by']): Candidate => {
    const text = page.text.slice(range.start, range.end);
    // A side stored empty is compared with what is there now (nothing at the page's start or end).
    const before = page.text.slice(Math.max(0, range.start - (prefix.length || CONTEXT)), range.start);
    const after = page.text.slice(range.end, range.end + (suffix.length || CONTEXT));
    const quoteScore = quote ? quoteSimilarity(exact, storedLength, text) : 0;
    // A side that reaches the page's start or end agrees wholly when it is still all there is.
    const agreeBefore = before === prefix && range.start <= prefix.length ? CONTEXT : Math.max(0, agreement(prefix, before, true) - 1);
    const agreeAfter =
      after === suffix && range.end + suffix.length >= page.text.length ? CONTEXT : Math.max(0, agreement(suffix, after) - 1);
    const parentRange = element.parentElement && element.parentElement !== page.root ? rangeOf(page, element.parentElement) : range;
    const evidence: Evidence = {
      quote: quoteScore,
      prefix: quote ? contextSimilarity(quote.prefix, before) : 0,
      suffix: quote ? contextSimilarity(quote.suffix, after) : 0,
      agreeBefore,
      agreeAfter,
      agreeWithin: Math.min(agreeBefore, range.start - parentRange.start) + Math.min(agreeAfter, parentRange.end - range.end),
      prefixOnPage: quoteScore >= 0.95 || !exact ? stillOnPage().prefix : true,
      suffixOnPage: quoteScore >= 0.95 || !exact ? stillOnPage().suffix : true,
      css: element === selected ? (stable ? 'stable' : 'positional') : false,
      tag: tag === undefined ? undefined : element.localName === tag,
      textless: exact.length === 0,
      aloneInGap: exact.length === 0 && range.start === range.end ? gapElements(page, range.start, element.localName).length === 1 : true,
      distinctive: exact.length >= DISTINCTIVE,
    };
    let score = scoreOf(evidence);
    // Within one nest of elements with the same text, the one the selector's own part still describes.
    if (compound && safeMatches(element, compound)) score = Math.min(1, score + 0.02);
    return { element, range, by, evidence, score };
  };

  const candidates: Candidate[] = [];
  if (selected) {
    const first = evaluate(selected, rangeOf(page, selected), 'css');
    // No anchor (an old thread): the selector is all there is, and it names one element.
    if (!quote) return { element: selected, confidence: 0.6, by: 'css' };
    candidates.push(first);
    // Unchanged (the common case on every pass): the selector names an element with the same text
    // between the same neighbours, that stretch is nowhere else on the page, and nor is the text
    // with what follows it: a copy of its card put before it would take its place in a positional
    // selector, with the same text before it, but the text after it would then be there twice.
    const once = (text: string) => page.text.indexOf(text) === page.text.lastIndexOf(text);
    const unchanged =
      first.evidence.quote === 1 && first.evidence.agreeBefore >= prefix.length - 1 && first.evidence.agreeAfter >= suffix.length - 1;
    if (unchanged && first.evidence.aloneInGap && (stable || (once(prefix + exact + suffix) && once(exact + suffix))))
      return { element: selected, confidence: first.score, by: 'css' };
  }
  if (quote && exact.length === 0 && tag && (prefix || suffix)) {
    // An element without text: where the text before it meets the text after it, the elements of its tag there.
    const seen = new Set<Element>(selected ? [selected] : []);
    // Both sides as they were, else either side (siblings came between, or it moved with its card).
    const gaps = new Set<number>();
    const find = (text: string, offset: number) => {
      for (let at = page.text.indexOf(text), count = 0; at >= 0 && count < 3; at = page.text.indexOf(text, at + 1), count += 1)
        gaps.add(at + offset);
    };
    find(prefix + suffix, prefix.length);
    if (!gaps.size && prefix) find(prefix, prefix.length);
    if (suffix) find(suffix, 0);
    for (const gap of gaps) {
      for (const element of gapElements(page, gap, tag)) {
        if (seen.has(element)) continue;
        seen.add(element);
        candidates.push(evaluate(element, { start: gap, end: gap }, 'textQuote'));
      }
    }
  }
  if (quote && exact.length > 0) {
    const seen = new Set<Element>(selected ? [selected] : []);
    const limit = Math.max(storedLength, exact.length) * 2 + 40;
    const consider = (start: number, end: number) => {
      const nest = elementsHolding(page, start, end, limit)
        .filter((element) => !seen.has(element))
        .map((element) => evaluate(element, rangeOf(page, element), 'textQuote'));
      nest.forEach((candidate) => seen.add(candidate.element));
      // One place, one contender: the best of the nest, the innermost on a tie (what a click lands on).
      const best = nest.reduce<Candidate | undefined>(
        (kept, candidate) => (!kept || candidate.score > kept.score ? candidate : kept),
        undefined,
      );
      if (best) candidates.push(best);
    };
    // Every occurrence (up to a bound), the ones whose nearest neighbours agree most looked at closely.
    const occurrences: { at: number; agree: number }[] = [];
    for (let at = page.text.indexOf(exact); at >= 0 && occurrences.length < MAX_OCCURRENCES * 5; at = page.text.indexOf(exact, at + 1)) {
      const agree =
        agreement(prefix, page.text.slice(Math.max(0, at - prefix.length), at), true) +
        agreement(suffix, page.text.slice(at + exact.length, at + exact.length + suffix.length));
      occurrences.push({ at, agree });
    }
    for (const { at } of [...occurrences].sort((a, b) => b.agree - a.agree).slice(0, MAX_OCCURRENCES)) consider(at, at + exact.length);
    // An edited text is looked for only when the text is nowhere as it was, first near where it was.
    const settled =
      occurrences.length > 0 ||
      candidates.some(
        (candidate) => candidate.evidence.quote >= 0.6 && Math.min(candidate.evidence.prefix, candidate.evidence.suffix) >= 0.9,
      );
    if (!settled) {
      const maxErrors = Math.floor(exact.length * 0.4);
      const hint = position?.start ?? 0;
      const windows: [number, number][] = [[Math.max(0, hint - NEAR), Math.min(page.text.length, hint + NEAR)]];
      if (page.text.length > 2 * NEAR && page.text.length <= MAX_FUZZY_TEXT) windows.push([0, page.text.length]);
      for (const [from, to] of windows) {
        for (const match of search(page.text.slice(from, to), exact, maxErrors).slice(0, MAX_OCCURRENCES))
          consider(from + match.start, from + match.end);
        if (candidates.some((candidate) => candidate.by === 'textQuote' && candidate.evidence.quote >= 0.6)) break;
      }
    }
  }
  const distinct = (a: Candidate, b: Candidate) => !a.element.contains(b.element) && !b.element.contains(a.element);
  const touching = (a: Candidate, b: Candidate) => b.range.start - a.range.end <= 1 && a.range.start - b.range.end <= 1;
  const chosen = choose(candidates, distinct, touching);
  return chosen && { element: chosen.element, confidence: chosen.score, by: chosen.by };
}

/**
 * Whether `context` (a stored prefix or suffix) is still on the page: whole, or its half nearer the
 * element, or its farther half (an edit touches one of them at most, mostly).
 */
function occurs(text: string, context: string): boolean {
  if (context.length < 8) return true;
  const half = Math.floor(context.length / 2);
  return text.includes(context) || text.includes(context.slice(0, half)) || text.includes(context.slice(half));
}

function safeMatches(element: Element, selector: string): boolean {
  try {
    return element.matches(selector);
  } catch {
    return false;
  }
}
