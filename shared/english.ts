/**
 * Words as messages put them before a reader: errors are read by people, so a word that varies
 * ("image", "video", "external_user_avatar", "image/png", 800) gets the article it is spoken with.
 */

/** Letters whose spoken name starts with a vowel sound: "an F", "an HTML page", "an MP4", "an SQS queue". */
const VOWEL_SOUND_LETTERS = new Set('AEFHILMNORSX');

/** Initialisms that are written in lower case too and still spelt out ("an http URL", "an mkv file"). */
const SPELT_OUT = new Set(['http', 'https', 'html', 'sdk', 'sqs', 'svg', 'xml', 'mkv', 'mxf', 'rsa', 'dsa', 'ec']);

/** Words spelt with a vowel but spoken with a consonant ("a user", "a unique id", "a one-off", "a euro"). */
const CONSONANT_SOUND_START = /^(u(ni|s[aeiu]|t[aei]|r[aeiou]|biq|uid|rl\b)|eu|ewe|one\b|once\b)/i;

/** Words spelt with a consonant but spoken with a vowel ("an hour", "an honest"). */
const VOWEL_SOUND_START = /^(hour|honest|honou?r|heir)/i;

/** "a" or "an" for `word` as it is spoken: its first letter's sound, spelt-out acronyms and numbers included. */
export function indefiniteArticle(word: string | number): 'a' | 'an' {
  const text = String(word).trim();
  const number = /^[\d,]+/.exec(text)?.[0]?.replaceAll(',', '');
  if (number) {
    // "an 8", "an 800", "an 11", "an 18,000": eight, eleven and eighteen lead the spoken number.
    const leading = number.length % 3 === 2 ? number.slice(0, 2) : number.slice(0, 1);
    return leading.startsWith('8') || leading === '11' || leading === '18' ? 'an' : 'a';
  }
  const head = /^[A-Za-z]+/.exec(text)?.[0];
  if (!head) return 'a';
  // Acronyms are spelt out ("an RSA key", "a PNG"); a lone capital is a letter too.
  if (head === head.toUpperCase() || SPELT_OUT.has(head.toLowerCase())) return VOWEL_SOUND_LETTERS.has(head[0]!.toUpperCase()) ? 'an' : 'a';
  if (VOWEL_SOUND_START.test(head)) return 'an';
  if (CONSONANT_SOUND_START.test(text)) return 'a';
  return /^[aeiou]/i.test(head) ? 'an' : 'a';
}

/**
 * `word` after its indefinite article: "an image", "a video", "an external_user_avatar"; with
 * `capital`, for the start of a sentence ("An image pin ...").
 */
export function withArticle(word: string | number, options: { capital?: boolean } = {}): string {
  const article = indefiniteArticle(word);
  return `${options.capital ? (article === 'a' ? 'A' : 'An') : article} ${word}`;
}
