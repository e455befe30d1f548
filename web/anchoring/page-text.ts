import { normaliseText } from './text.js';

/**
 * The page text every anchor is measured in: the text nodes of `document.body` in document order,
 * leaving out what a reader never sees as text (script, style, noscript, template, textarea and
 * the embed's own element), each with its whitespace collapsed and trimmed, blank ones dropped,
 * joined by single spaces. A boundary between two text nodes is a space, so words of adjacent
 * elements never run together whether or not the markup has whitespace between them (React's has
 * none). Text offsets (`textPosition`) count UTF-16 code units of this string.
 *
 * It is built once per anchoring pass and shared by every thread of that pass.
 */

/** Elements whose text is not page text. */
const SKIPPED_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'TEXTAREA', 'REVIEW-BOARD-EMBED']);

/** Beyond this many characters the rest of the page is not indexed (its elements are found by CSS only). */
export const MAX_PAGE_TEXT = 2_000_000;

export interface PageText {
  text: string;
  /** Indexed text nodes in document order, and where each starts and ends in `text`. */
  nodes: Text[];
  starts: number[];
  ends: number[];
  /** Each indexed node's place in `nodes`. */
  indexOf: Map<Node, number>;
  root: Element;
}

/** Where an element's text lies in the page text: [start, end); an element without text is an empty range where it sits. */
export interface TextRange {
  start: number;
  end: number;
}

/**
 * Whether a text node is a skipped element's: script, style, noscript (with scripting on) and textarea
 * hold raw text only, template content is not in the tree, and the embed's UI is in its shadow root,
 * so the parent alone tells.
 */
function skipped(node: Text): boolean {
  const parent = node.parentElement;
  return parent !== null && SKIPPED_TAGS.has(parent.tagName);
}

/** Indexes the page text of `root` (by default the document's body). */
export function buildPageText(document: Document, root: Element | null = document.body): PageText {
  const nodes: Text[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  const parts: string[] = [];
  let length = 0;
  if (root) {
    // A native walk over text nodes only: a filter callback per node costs more than the walk.
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode() as Text | null; node && length < MAX_PAGE_TEXT; node = walker.nextNode() as Text | null) {
      if (skipped(node)) continue;
      const value = normaliseText(node.data);
      if (!value) continue;
      if (parts.length) length += 1;
      nodes.push(node);
      starts.push(length);
      parts.push(value);
      length += value.length;
      ends.push(length);
    }
  }
  const indexOf = new Map<Node, number>();
  nodes.forEach((node, index) => indexOf.set(node, index));
  return { text: parts.join(' '), nodes, starts, ends, indexOf, root: root ?? document.documentElement };
}

/** The index of the node whose text holds `offset` (or the last one starting before it). */
export function nodeAt(page: PageText, offset: number): number {
  let low = 0;
  let high = page.starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (page.starts[middle]! <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * Where `element`'s text lies in the page text. Reads the element's first and last indexed text
 * nodes only (a walk from each end), so a large element costs no more than a small one.
 */
export function rangeOf(page: PageText, element: Element): TextRange {
  const document = element.ownerDocument;
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  let first: number | undefined;
  for (let node = walker.nextNode(); node && first === undefined; node = walker.nextNode()) first = page.indexOf.get(node);
  if (first !== undefined) {
    walker.currentNode = element;
    let last: number | undefined;
    for (let node = walker.lastChild(); node && last === undefined; node = walker.previousNode()) last = page.indexOf.get(node);
    return { start: page.starts[first]!, end: page.ends[last ?? first]! };
  }
  // No text of its own: the empty range just before the next indexed text (or at the page's end).
  if (!page.root.contains(element)) return { start: page.text.length, end: page.text.length };
  const after = document.createTreeWalker(page.root, NodeFilter.SHOW_TEXT);
  after.currentNode = element;
  for (let node = after.nextNode(); node; node = after.nextNode()) {
    const index = page.indexOf.get(node);
    if (index !== undefined) return { start: page.starts[index]!, end: page.starts[index]! };
  }
  return { start: page.text.length, end: page.text.length };
}

/**
 * The elements whose text may be the page text range [start, end): the innermost element holding
 * both ends, then its ancestors while their text is at most `limit` characters long.
 */
export function elementsHolding(page: PageText, start: number, end: number, limit: number): Element[] {
  if (!page.nodes.length) return [];
  const first = page.nodes[nodeAt(page, start)]!;
  const last = page.nodes[nodeAt(page, Math.max(start, end - 1))]!;
  let element: Element | null = first.parentElement;
  while (element && !element.contains(last)) element = element.parentElement;
  const chain: Element[] = [];
  for (; element; element = element.parentElement) {
    const range = rangeOf(page, element);
    if (range.end - range.start > limit) break;
    chain.push(element);
    if (element === page.root) break;
  }
  return chain;
}

/**
 * The elements named `tag` without text that lie where the page text has the boundary `offset`:
 * after the text node before it and before the text node starting there (an image between a
 * caption and the next heading). Bounded to a few hundred elements of walk.
 */
export function gapElements(page: PageText, offset: number, tag: string): Element[] {
  const document = page.root.ownerDocument;
  const nextIndex = offset >= page.text.length ? page.nodes.length : nodeAt(page, offset);
  const next = page.nodes[nextIndex];
  const previous = nextIndex > 0 ? page.nodes[nextIndex - 1] : undefined;
  const walker = document.createTreeWalker(page.root, NodeFilter.SHOW_ELEMENT);
  walker.currentNode = previous ?? page.root;
  const found: Element[] = [];
  for (
    let node = walker.nextNode() as Element | null, steps = 0;
    node && steps < 500;
    node = walker.nextNode() as Element | null, steps += 1
  ) {
    if (next && next.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING) break;
    if (node.localName === tag && !(next && node.contains(next))) found.push(node);
  }
  return found;
}
