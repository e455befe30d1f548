import { describe, expect, it } from 'vitest';
import { indefiniteArticle, withArticle } from '../../shared/english.js';

describe('withArticle (errors are read by people: the article a word is spoken with)', () => {
  it.each([
    ['image', 'an image'],
    ['video', 'a video'],
    ['webpage', 'a webpage'],
    ['pdf', 'a pdf'],
    ['external_user_avatar', 'an external_user_avatar'],
    ['annotation_export', 'an annotation_export'],
    ['user_avatar', 'a user_avatar'],
    ['image/png', 'an image/png'],
    ['application/zip', 'an application/zip'],
    ['text/plain', 'a text/plain'],
    ['unknown', 'an unknown'],
    ['upload', 'an upload'],
    ['unique id', 'a unique id'],
    ['one-off', 'a one-off'],
    ['hour', 'an hour'],
    ['RSA', 'an RSA'],
    ['EC', 'an EC'],
    ['DSA', 'a DSA'],
    ['ED25519', 'an ED25519'],
    ['PNG', 'a PNG'],
    ['URL', 'a URL'],
    ['http', 'an http'],
    ['svg', 'an svg'],
    [800, 'an 800'],
    [1024, 'a 1024'],
    [8, 'an 8'],
    [11, 'an 11'],
    [18, 'an 18'],
    [18_000, 'an 18000'],
    [110, 'a 110'],
    ['8.00 MB', 'an 8.00 MB'],
  ])('%s -> %s', (word, expected) => {
    expect(withArticle(word)).toBe(expected);
  });

  it('capitalizes the article at the start of a sentence', () => {
    expect(withArticle('image', { capital: true })).toBe('An image');
    expect(withArticle('video', { capital: true })).toBe('A video');
  });

  it('answers "a" for a word that starts with neither a letter nor a digit', () => {
    expect(indefiniteArticle('')).toBe('a');
    expect(indefiniteArticle('-')).toBe('a');
  });
});
