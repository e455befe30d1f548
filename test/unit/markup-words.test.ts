import { describe, expect, it } from 'vitest';
import {
  indexedWords,
  markupWordKeys,
  matchesWords,
  MAX_INDEXED_WORD_LENGTH,
  WORD_SLOTS,
  wordsOf,
  wordSortKey,
} from '../../shared/db/markup-words.js';

describe('the markup word index (issue 34)', () => {
  it('indexes the name words first, then the URL parts, without the scheme and www, lowercase and distinct', () => {
    expect(indexedWords({ name: 'Homepage Redesign v2', url: 'https://www.Example.com/pricing/homepage?ref=Launch%20Day' })).toEqual([
      'homepage',
      'redesign',
      'v2',
      'example',
      'com',
      'pricing',
      'ref',
      'launch',
      'day',
    ]);
  });

  it('keeps at most WORD_SLOTS words, each cut to its indexed length', () => {
    const long = 'x'.repeat(MAX_INDEXED_WORD_LENGTH + 10);
    const words = indexedWords({ name: `${long} ${Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ')}` });
    expect(words).toHaveLength(WORD_SLOTS);
    expect(words[0]).toBe('x'.repeat(MAX_INDEXED_WORD_LENGTH));
  });

  it('splits on anything but letters and digits, in any script', () => {
    expect(wordsOf('Café_menu-2024.PNG  Übersicht 東京')).toEqual(['cafe', 'menu', '2024', 'png', 'ubersicht', '東京']);
  });

  it('matches when every query word starts a word of the name or URL (any word, indexed or not)', () => {
    const markup = { name: 'Spring launch landing page', url: 'https://shop.example.com/spring' };
    expect(matchesWords(markup, ['launch'])).toBe(true);
    expect(matchesWords(markup, ['lau', 'pag'])).toBe(true);
    expect(matchesWords(markup, ['https', 'shop'])).toBe(true);
    expect(matchesWords(markup, ['aunch'])).toBe(false);
    expect(matchesWords(markup, ['launch', 'autumn'])).toBe(false);
  });

  it('keys each word in its own slot, in the workspace partition (one attribute all slots share), sorting a word before its longer neighbours and newest first within a word', () => {
    const keys = markupWordKeys({ id: 'm1', workspaceId: 'w1', name: 'Price list', createdAt: 1000 });
    expect(keys).toEqual({ GSIWPK: 'WS#w1#WORDS', GSI6SK: wordSortKey('price', 1000, 'm1'), GSI7SK: wordSortKey('list', 1000, 'm1') });
    expect(markupWordKeys({ id: 'm2', workspaceId: 'w1', name: '…', createdAt: 1000 })).toEqual({});
    expect(wordSortKey('price', 1000, 'a') < wordSortKey('prices', 1000, 'a')).toBe(true);
    expect(wordSortKey('price', 2000, 'a') < wordSortKey('price', 1000, 'a')).toBe(true);
  });

  it('folds stored and query words alike: İ is i (not split at its combining dot), ß is ss, accents and compatibility forms dropped', () => {
    expect(wordsOf('İstanbul')).toEqual(['istanbul']);
    expect(wordsOf('İSTANBUL Straße STRASSE ẞ')).toEqual(['istanbul', 'strasse', 'strasse', 'ss']);
    expect(wordsOf('Café ﬁle Ａbc naïve')).toEqual(['cafe', 'file', 'abc', 'naive']);
    expect(wordsOf('한국어 東京')).toEqual(['한국어', '東京']);
    expect(matchesWords({ name: 'İstanbul office' }, ['istanbul'])).toBe(true);
    expect(matchesWords({ name: 'Hauptstraße' }, wordsOf('hauptstrasse'))).toBe(true);
    expect(indexedWords({ name: 'Café İstanbul' })).toEqual(['cafe', 'istanbul']);
  });

  it('checks the other words of a query on every word of the name and URL, past the ten indexed ones and in the fragment', () => {
    const markup = {
      name: 'one two three four five six seven eight nine ten eleven twelve thirteen',
      url: 'https://example.com/product#reviews',
    };
    expect(indexedWords(markup)).not.toContain('eleven');
    expect(matchesWords(markup, ['one', 'eleven'])).toBe(true);
    expect(matchesWords(markup, wordsOf('thirteen #reviews'))).toBe(true);
  });
});
