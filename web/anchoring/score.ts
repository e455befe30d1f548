import search from 'approx-string-match';

/**
 * The pure rules that decide whether a candidate element is the commented one: how alike two texts
 * are, what a candidate's evidence is worth, and when the best candidate is trusted. No DOM here,
 * so unit tests check every rule.
 *
 * The guiding rule is the issue's: a thread may stay unanchored, it must never be placed on a
 * look-alike. So text alone is never enough: an element is taken when its text matches and at
 * least one side of its surrounding text does too (or a selector without positions names it), an
 * edited text only when both sides still match, and never when another element is nearly as good.
 */

/**
 * How alike `a` and `b` are, from 0 to 1: one minus their edit distance over the longer length.
 * The distance comes from approx-string-match (the fewest errors of `a` anywhere in `b`, plus the
 * characters of `b` that match left out); it never undercounts, so likeness is never overstated.
 */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const longer = Math.max(a.length, b.length);
  if (!a.length || !b.length) return 0;
  const matches = search(b, a, Math.ceil(longer / 2));
  let distance = Number.POSITIVE_INFINITY;
  for (const match of matches) distance = Math.min(distance, match.errors + b.length - (match.end - match.start));
  return Number.isFinite(distance) ? Math.max(0, 1 - distance / longer) : 0;
}

/**
 * How well the text beside a candidate matches the stored context, from 0 to 1. Two unrelated
 * stretches of prose in one language are about half alike by edit distance, so half is where the
 * scale starts: 0 is no better than chance, 1 the same text. A side stored empty (the element was
 * at the page's start or end) is neutral (0.5) unless it is still empty (1).
 */
/** How many characters at the start of `a` and `b` (or, `fromEnd`, at their ends) are the same. */
export function agreement(a: string, b: string, fromEnd = false): number {
  const length = Math.min(a.length, b.length);
  let count = 0;
  while (count < length && (fromEnd ? a[a.length - 1 - count] === b[b.length - 1 - count] : a[count] === b[count])) count += 1;
  return count;
}

export function contextSimilarity(stored: string | undefined, actual: string): number {
  if (!stored) return actual.length === 0 ? 1 : 0.5;
  return Math.max(0, 2 * similarity(stored, actual) - 1);
}

/**
 * How well a candidate's text matches the stored quote. A quote shorter than the stored range was
 * cut (at describe time, to bound the anchor): it is compared with as much of the candidate's text,
 * and the lengths of the whole texts weigh in a little.
 */
export function quoteSimilarity(quote: string, storedLength: number, text: string): number {
  if (storedLength <= quote.length) return similarity(quote, text);
  const ratio = Math.min(text.length, storedLength) / Math.max(text.length, storedLength, 1);
  return similarity(quote, text.slice(0, quote.length)) * (0.75 + 0.25 * ratio);
}

/** What is known of one candidate element. */
export interface Evidence {
  /** Likeness of its text to the quote (1 when both are empty). */
  quote: number;
  /** Likeness of the text before it and after it to the stored prefix and suffix. */
  prefix: number;
  suffix: number;
  /** Whether the stored selector names exactly this element: one with positions (`:nth-child`) proves little on a changed page. */
  css: 'stable' | 'positional' | false;
  /** Whether its tag is the stored selector's (undefined: the selector names none). */
  tag: boolean | undefined;
  /** Whether the stored quote is empty (an element without text: an image, an input, an empty box). */
  textless: boolean;
  /**
   * For an element without text: whether it is the only one of its tag between the same two texts.
   * Of two images in a row, one removed, the other sits where it sat: only a selector without
   * positions (its alt text, a test id) may tell them apart.
   */
  aloneInGap: boolean;
  /** Whether the stored quote is long enough to be told apart from others on its own. */
  distinctive: boolean;
  /** How many characters right before and right after it are exactly the stored ones. */
  agreeBefore: number;
  agreeAfter: number;
  /**
   * How many of those agreeing characters lie within its parent element (its own card, row or
   * item): the context that moves with it, which a neighbour that merely took its place lacks.
   */
  agreeWithin: number;
  /**
   * Whether the stored prefix, and the stored suffix, are still somewhere on the page. When one
   * side's neighbour vanished with the element (a removed card took its own text with it), the
   * element beside it inherits the other side: that one must not pass for the element.
   */
  prefixOnPage: boolean;
  suffixOnPage: boolean;
}

/** Below this a candidate is not even a contender; the margin the best must keep over any other. */
export const THRESHOLD = 0.5;
export const MARGIN = 0.1;

/**
 * A candidate's score, 0 to 1: text first, then context, then a selector that still names it. A
 * selector with positions counts only for an element that kept some text of its own beside it: one
 * whose matching text all lies outside its parent took the place of a card that moved or was removed.
 */
export function scoreOf(evidence: Evidence): number {
  const bonus = evidence.css === 'stable' ? 0.15 : evidence.css === 'positional' && evidence.agreeWithin >= 12 ? 0.05 : 0;
  const penalty = evidence.tag === false ? 0.25 : 0;
  const within = 0.15 * Math.min(1, evidence.agreeWithin / 32);
  const score = 0.5 * evidence.quote + 0.25 * evidence.prefix + 0.25 * evidence.suffix + bonus + within - penalty;
  return Math.max(0, Math.min(1, score));
}

/**
 * Whether a candidate may be taken at all, before comparing it with the others. `unique`: no other
 * candidate's text is alike (at least 0.8) to the quote.
 */
export function acceptable(evidence: Evidence, unique: boolean): boolean {
  const { quote, prefix, suffix, css, tag } = evidence;
  if (tag === false) return false;
  const bothSides = Math.min(prefix, suffix);
  const eitherSide = Math.max(prefix, suffix);
  // One side matches; the other changed, but what was there is still on the page (siblings came between).
  const otherSideStays = prefix >= suffix ? evidence.suffixOnPage : evidence.prefixOnPage;
  if (evidence.textless) {
    if (quote < 1) return false;
    if (css === 'stable') return eitherSide >= 0.6;
    if (!evidence.aloneInGap) return false;
    return bothSides >= (css === 'positional' ? 0.9 : 0.95) || (eitherSide >= 0.95 && otherSideStays);
  }
  if (quote >= 0.95 && css === 'stable') return true;
  if (quote >= 0.95 && eitherSide >= 0.7 && (bothSides >= 0.7 || otherSideStays)) return true;
  // Moved with its row or card: some words of its own came along (on both sides, or within its parent).
  const { agreeBefore, agreeAfter } = evidence;
  const cameAlong = (Math.min(agreeBefore, agreeAfter) >= 4 && agreeBefore + agreeAfter >= 24) || evidence.agreeWithin >= 24;
  if (quote >= 0.95 && cameAlong && evidence.prefixOnPage && evidence.suffixOnPage) return true;
  // Moved: the same long text, alone on the page, though neither neighbour came along.
  if (quote >= 0.95 && evidence.distinctive && unique) return true;
  // Edited where it stands: both neighbours vouch for it, the nearest text on both sides unchanged.
  if (quote >= 0.3 && bothSides >= 0.9 && Math.min(agreeBefore, agreeAfter) >= 16) return true;
  if (quote >= 0.6 && bothSides >= 0.7) return true;
  return css === 'stable' && quote >= 0.7 && eitherSide >= 0.8;
}

export interface Contender {
  evidence: Evidence;
  score: number;
}

/**
 * Whether two touching elements split the stored context between them: one has the text before
 * and not the text after, the other the text after and not the text before. Each one's missing
 * side is the other: one of them is the element, the other a near copy put right beside it (a
 * paragraph of the same text, edited, before or after it), and their context cannot tell which.
 */
function splitContext(a: Evidence, b: Evidence): boolean {
  const firstThen = (first: Evidence, second: Evidence) =>
    first.prefix >= 0.9 && first.suffix < 0.5 && second.suffix >= 0.9 && second.prefix < 0.5;
  return firstThen(a, b) || firstThen(b, a);
}

/**
 * Whether `original` outdoes `copy` by its text: they split the context, and of the two only the
 * original carries the stored text unchanged. A copy put beside the element with its text edited
 * is one change; the element edited and a copy of its old text put beside it would be two, the
 * second a copy of a text the page no longer has. A selector without positions naming the copy
 * still wins (the page named it), and two unchanged texts stay undecided (an exact copy).
 */
function outdoes(original: Contender, copy: Contender): boolean {
  return (
    original.evidence.quote === 1 &&
    copy.evidence.quote < 1 &&
    copy.evidence.css !== 'stable' &&
    splitContext(original.evidence, copy.evidence)
  );
}

/**
 * The one contender to trust, or undefined. `distinct(a, b)`: whether two contenders are different
 * places (neither element holds the other); contenders in one nest are the same place. The best
 * must be acceptable and stay MARGIN ahead of every distinct contender that could pass itself (its
 * text the same, or acceptable on its own: a neighbour with a merely similar text, such as another
 * price, does not count); and unless a selector
 * without positions names it, no distinct contender may carry the same text with one matching
 * side: a copy put beside the original looks as right as the original, so neither is taken.
 * `touching(a, b)`: whether nothing but a space lies between their texts. Of two touching
 * contenders that split the context, only the text decides (see outdoes): the one outdone is
 * neither taken nor a rival of the other.
 */
export function choose<T extends Contender>(
  contenders: readonly T[],
  distinct: (a: T, b: T) => boolean,
  touching: (a: T, b: T) => boolean = () => false,
): T | undefined {
  const ranked = [...contenders].sort((a, b) => b.score - a.score);
  const othersOf = (candidate: T) => ranked.filter((other) => other !== candidate && distinct(candidate, other));
  // Of two touching elements that split the context, the one with the unchanged text (see outdoes).
  const outdone = (candidate: T) => othersOf(candidate).some((other) => touching(candidate, other) && outdoes(other, candidate));
  // The best candidate that may be taken at all, not only the best-scored: a look-alike put where a
  // positional selector points scores high on its neighbours yet may not be taken, and must not
  // hide the unchanged original the text still finds. It must still beat every rival below.
  const best = ranked.find(
    (candidate) =>
      candidate.score >= THRESHOLD &&
      !outdone(candidate) &&
      acceptable(
        candidate.evidence,
        othersOf(candidate).every((other) => other.evidence.quote < 0.8),
      ),
  );
  if (!best) return undefined;
  const others = othersOf(best).filter((other) => !(touching(best, other) && outdoes(best, other)));
  const rivalled = others.some(
    (other) =>
      (other.score > best.score - MARGIN && (other.evidence.quote >= 0.95 || acceptable(other.evidence, false))) ||
      (best.evidence.css !== 'stable' &&
        other.evidence.quote >= 0.95 &&
        Math.max(other.evidence.prefix, other.evidence.suffix) >= 0.9 &&
        (touching(best, other) || other.evidence.agreeWithin >= 12 || other.evidence.agreeWithin + 12 > best.evidence.agreeWithin)),
  );
  return rivalled ? undefined : best;
}
