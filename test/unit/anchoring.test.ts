import { describe, expect, it } from 'vitest';
import { normaliseText } from '../../web/anchoring/text.js';
import {
  acceptable,
  agreement,
  choose,
  contextSimilarity,
  quoteSimilarity,
  scoreOf,
  similarity,
  type Contender,
  type Evidence,
} from '../../web/anchoring/score.js';

/**
 * The pure rules of the embeddable client's anchoring (issue 31 part 3, web/anchoring): the page
 * text's normalisation and the scoring that decides whether a candidate is the commented element.
 * The rule they serve: a thread may stay unanchored, it is never placed on a look-alike.
 */
const evidence = (changes: Partial<Evidence> = {}): Evidence => ({
  quote: 1,
  prefix: 1,
  suffix: 1,
  css: false,
  tag: true,
  textless: false,
  aloneInGap: true,
  distinctive: false,
  agreeBefore: 64,
  agreeAfter: 64,
  agreeWithin: 0,
  prefixOnPage: true,
  suffixOnPage: true,
  ...changes,
});

interface Named extends Contender {
  name: string;
}
const contender = (name: string, changes: Partial<Evidence> = {}): Named => {
  const made = evidence(changes);
  return { name, evidence: made, score: scoreOf(made) };
};
const apart = () => true;

describe('the page text', () => {
  it('collapses every whitespace run to one space and trims the ends', () => {
    expect(normaliseText('  Add\n\t to   cart \u00a0')).toBe('Add to cart');
    expect(normaliseText(' \n ')).toBe('');
  });
});

describe('text likeness', () => {
  it('is 1 for the same text, 0 against nothing, and falls with each edit', () => {
    expect(similarity('Add to cart', 'Add to cart')).toBe(1);
    expect(similarity('Add to cart', '')).toBe(0);
    const oneEdit = similarity('Add to cart', 'Add to card');
    const twoWords = similarity('Add to cart', 'Add to basket');
    expect(oneEdit).toBeCloseTo(1 - 1 / 11, 5);
    expect(twoWords).toBeLessThan(oneEdit);
  });

  it('puts unrelated prose near 0 context likeness, though its edit distance leaves it up to half alike', () => {
    const stored = 'quality design comfort delivery order customers support team ye';
    const unrelated = 'warranty return shipping price value every daily home office ou';
    const halfChanged = `${stored.slice(0, 32)}${unrelated.slice(32)}`;

    expect(similarity(stored, unrelated)).toBeLessThan(0.7);
    expect(contextSimilarity(stored, unrelated)).toBeLessThan(0.4);
    expect(contextSimilarity(stored, halfChanged)).toBeLessThan(0.7);
    expect(contextSimilarity(stored, stored)).toBe(1);
  });

  it('treats a side stored empty (the page start or end) as neutral unless it is still empty', () => {
    expect(contextSimilarity(undefined, '')).toBe(1);
    expect(contextSimilarity('', 'New banner')).toBe(0.5);
  });

  it('compares a cut quote with as much of the text, the whole lengths weighing a little', () => {
    const text = 'A long paragraph '.repeat(30);
    const quote = text.slice(0, 256);

    expect(quoteSimilarity(quote, text.length, text)).toBe(1);
    expect(quoteSimilarity(quote, text.length, text.slice(0, 300))).toBeLessThan(1);
    expect(quoteSimilarity(quote, text.length, text.slice(0, 300))).toBeGreaterThan(0.75);
  });

  it('counts the characters two texts share at their start, or at their end', () => {
    expect(agreement('Basic $9/month', 'Basic $18/month')).toBe(7);
    expect(agreement('team. $61.50 ', 'gift. $15.00 ', true)).toBe(2);
  });
});

describe('whether a candidate may be taken', () => {
  it('takes the same text with one matching side when the other side is still on the page (siblings came between)', () => {
    expect(acceptable(evidence({ prefix: 0, agreeBefore: 0 }), false)).toBe(true);
  });

  it('refuses a neighbour that inherited one side while the other side left the page with the removed element', () => {
    expect(acceptable(evidence({ prefix: 0, agreeBefore: 0, prefixOnPage: false }), false)).toBe(false);
  });

  it('takes an edited text only where both neighbours still vouch for it', () => {
    expect(acceptable(evidence({ quote: 0.45 }), false)).toBe(true);
    expect(acceptable(evidence({ quote: 0.45, suffix: 0.5, agreeAfter: 3 }), false)).toBe(false);
  });

  it('takes a long text whose neighbours all changed only when no other element has a text like it', () => {
    const moved = evidence({ prefix: 0, suffix: 0, agreeBefore: 0, agreeAfter: 0, distinctive: true });

    expect(acceptable(moved, true)).toBe(true);
    expect(acceptable(moved, false)).toBe(false);
    expect(acceptable({ ...moved, distinctive: false }, true)).toBe(false);
  });

  it('takes a short text moved with its row from the words of its own that came along inside its parent', () => {
    expect(acceptable(evidence({ prefix: 0, suffix: 0.2, agreeBefore: 0, agreeAfter: 31, agreeWithin: 31 }), false)).toBe(true);
    expect(acceptable(evidence({ prefix: 0, suffix: 0.2, agreeBefore: 0, agreeAfter: 31, agreeWithin: 0 }), false)).toBe(false);
  });

  it('never takes an element of another tag', () => {
    expect(acceptable(evidence({ tag: false }), true)).toBe(false);
  });

  it('takes an element without text where one of its two texts still is (the other still on the page), only when no other of its tag is there, unless a selector without positions names it', () => {
    expect(acceptable(evidence({ textless: true }), true)).toBe(true);
    expect(acceptable(evidence({ textless: true, css: 'positional' }), true)).toBe(true);
    expect(acceptable(evidence({ textless: true, css: 'positional', aloneInGap: false }), true)).toBe(false);
    expect(acceptable(evidence({ textless: true, css: 'stable', aloneInGap: false, prefix: 0 }), true)).toBe(true);
    expect(acceptable(evidence({ textless: true, prefix: 0.8 }), true)).toBe(true);
    expect(acceptable(evidence({ textless: true, prefix: 0.8, prefixOnPage: false }), true)).toBe(false);
  });
});

describe('choosing among candidates', () => {
  it('answers the clearly best candidate', () => {
    const right = contender('right');
    const lookAlike = contender('look-alike', { prefix: 0.1, suffix: 0.1, agreeBefore: 0, agreeAfter: 0 });

    expect(choose([lookAlike, right], apart)?.name).toBe('right');
  });

  it('answers nothing when two places are as good (a copy put beside the original)', () => {
    const copy = contender('copy', { suffix: 0.1, agreeAfter: 0, css: 'positional' });
    const original = contender('original', { prefix: 0.1, agreeBefore: 0 });

    expect(choose([copy, original], apart)).toBeUndefined();
  });

  it("does not let the card that took a moved card's place (its matching side all outside its own card) block the moved one", () => {
    const moved = contender('moved', { suffix: 0, agreeAfter: 0, agreeWithin: 63 });
    const tookItsPlace = contender('took its place', { prefix: 0, agreeBefore: 0, agreeWithin: 0 });

    expect(choose([tookItsPlace, moved], apart)?.name).toBe('moved');
  });

  it("gives a positional selector no weight when it names the element that took a moved card's place (none of the matching text is its own)", () => {
    // A card moved away: the selector div:nth-of-type(3) > button now names the next card's button,
    // whose following text is the stored one; the moved button kept its own card's text before it.
    const moved = contender('moved', { suffix: 0, agreeAfter: 0, agreeWithin: 63 });
    const tookItsPlace = contender('took its place', { prefix: 0, agreeBefore: 1, agreeWithin: 1, css: 'positional' });
    const keptItsOwn = contender('kept its own', { prefix: 0, agreeBefore: 1, agreeWithin: 12, css: 'positional' });

    expect(scoreOf(tookItsPlace.evidence)).toBeCloseTo(scoreOf({ ...tookItsPlace.evidence, css: false }), 5);
    expect(scoreOf(keptItsOwn.evidence)).toBeGreaterThan(scoreOf({ ...keptItsOwn.evidence, css: false }));
    expect(choose([tookItsPlace, moved], apart)?.name).toBe('moved');
  });

  it("answers nothing for an item copied right before itself, though the original's matching side is outside its list", () => {
    const copy = contender('copy', { suffix: 0, agreeAfter: 0, agreeWithin: 63, css: 'positional' });
    const original = contender('original', { prefix: 0, agreeBefore: 0, agreeWithin: 0 });

    expect(choose([copy, original], apart)?.name).toBe('copy');
    expect(choose([copy, original], apart, () => true)).toBeUndefined();
  });

  it('takes the unchanged original over a look-alike with its text edited put right before it: the two split the context, and only the text tells them apart', () => {
    // A paragraph with a near copy before it: the copy has the text before (and a positional
    // selector names it), the original the text after; what is missing on either side is the other one.
    const lookAlike = contender('look-alike', { quote: 0.99, suffix: 0, agreeAfter: 0, agreeWithin: 63, css: 'positional' });
    const original = contender('original', { prefix: 0, agreeBefore: 1, agreeWithin: 1 });

    expect(lookAlike.score - original.score).toBeGreaterThan(0.15);
    expect(choose([lookAlike, original], apart, () => true)?.name).toBe('original');
    expect(choose([original, lookAlike], apart, () => true)?.name).toBe('original');
  });

  it('takes the unchanged original over a look-alike with its text edited put right after it', () => {
    const original = contender('original', { suffix: 0, agreeAfter: 0, agreeWithin: 63, css: 'positional' });
    const lookAlike = contender('look-alike', { quote: 0.99, prefix: 0, agreeBefore: 1, agreeWithin: 64 });

    expect(choose([lookAlike, original], apart, () => true)?.name).toBe('original');
  });

  it('answers nothing for two touching elements that split the context when both texts, or neither, are the stored one', () => {
    const first = contender('first', { suffix: 0, agreeAfter: 0, agreeWithin: 63, css: 'positional' });
    const second = contender('second', { prefix: 0, agreeBefore: 1, agreeWithin: 64 });
    const edited = (made: Named, quote: number) => contender(made.name, { ...made.evidence, quote });

    expect(choose([first, second], apart, () => true)).toBeUndefined();
    expect(choose([edited(first, 0.99), edited(second, 0.98)], apart, () => true)).toBeUndefined();
  });

  it('lets the unchanged text settle only a split context: not two elements apart, nor an edited one that has both its sides', () => {
    const lookAlike = contender('look-alike', { quote: 0.99, suffix: 0, agreeAfter: 0, agreeWithin: 63, css: 'positional' });
    const original = contender('original', { prefix: 0, agreeBefore: 1, agreeWithin: 1 });
    // Apart (other texts between them), the rule for copies beside the original still holds.
    expect(choose([lookAlike, original], apart, () => false)?.name).not.toBe('original');
    // An element edited in place keeps both sides: a copy of its old text elsewhere does not displace it.
    const editedInPlace = contender('edited in place', { quote: 0.99, css: 'positional', agreeWithin: 63 });
    const copyOfOldText = contender('copy of the old text', { prefix: 0, suffix: 0, agreeBefore: 0, agreeAfter: 0 });
    expect(choose([editedInPlace, copyOfOldText], apart, () => true)?.name).toBe('edited in place');
  });

  it('does not let a neighbour with a merely similar text (another price) block the right one', () => {
    const right = contender('right', { prefix: 0, suffix: 0, agreeBefore: 7, agreeAfter: 31, agreeWithin: 37 });
    const otherPrice = contender('other price', { quote: 0.78, prefix: 0.66, suffix: 0, agreeBefore: 0, agreeAfter: 0, css: 'positional' });

    expect(choose([otherPrice, right], apart)?.name).toBe('right');
  });

  it('answers nothing below the threshold', () => {
    expect(choose([contender('weak', { quote: 0.4, prefix: 0, suffix: 0, agreeBefore: 0, agreeAfter: 0 })], apart)).toBeUndefined();
    expect(choose([], apart)).toBeUndefined();
  });
});
