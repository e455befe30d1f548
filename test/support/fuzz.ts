/**
 * Odd input for the fuzz test: values of the wrong type, huge and deep values, long strings, odd
 * unicode, broken bodies and headers. Pure and seeded: the same seed picks the same cases.
 */

/** mulberry32: a small seeded generator, so a failing run can be repeated from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` distinct entries of `list`, chosen by `random`. */
export function pick<T>(random: () => number, list: readonly T[], count: number): T[] {
  const pool = [...list];
  const chosen: T[] = [];
  while (chosen.length < count && pool.length > 0) chosen.push(pool.splice(Math.floor(random() * pool.length), 1)[0] as T);
  return chosen;
}

/** A labelled odd value, so a failure says what was sent without printing 100 KB. */
export interface Odd<T = unknown> {
  label: string;
  value: T;
}

const odd = <T>(label: string, value: T): Odd<T> => ({ label, value });

function deepArray(depth: number): unknown {
  let value: unknown = [];
  for (let level = 1; level < depth; level++) value = [value];
  return value;
}

function deepObject(depth: number): unknown {
  let value: unknown = { leaf: 1 };
  for (let level = 1; level < depth; level++) value = { a: value };
  return value;
}

/** Values of every JSON type, for any field. */
export const WRONG_TYPES: Odd[] = [
  odd('null', null),
  odd('true', true),
  odd('0', 0),
  odd('-1', -1),
  odd('"fuzz"', 'fuzz'),
  odd('[]', []),
  odd('{}', {}),
  odd('[null]', [null]),
  odd('{"a":null}', { a: null }),
];

export const ODD_NUMBERS: Odd[] = [
  odd('2^53+2', 2 ** 53 + 2),
  odd('-(2^53+2)', -(2 ** 53 + 2)),
  odd('1e308', 1e308),
  odd('-1e308', -1e308),
  odd('1e-200', 1e-200),
  odd('5e-324', 5e-324),
  odd('-0', -0),
  odd('0.1', 0.1),
  odd('2^31', 2 ** 31),
];

export const ODD_STRINGS: Odd[] = [
  odd('empty', ''),
  odd('spaces', '   '),
  odd('100 KB', 'x'.repeat(100_000)),
  odd('3,000 é', 'é'.repeat(3000)),
  odd('NUL', 'a\u0000b'),
  odd('lone surrogate', 'a\ud800b'),
  odd('reversed surrogates', '\udfff\ud800'),
  odd('500 emoji', '🙂'.repeat(500)),
  odd('bidi override', '\u202eevil.exe'),
  odd('combining', 'e\u0301\u0301\u0301'),
  odd('non-characters', '\uffff\ufffe'),
  odd('path', '../../etc/passwd'),
  odd('template', '${jndi:ldap://x}'),
  odd('markup', '<script>alert(1)</script>'),
  odd('CRLF', 'line\r\nX-Injected: 1'),
  odd('percent', '%00%ff%'),
];

export const ODD_CONTAINERS: Odd[] = [
  odd('array 3,000 deep', deepArray(3000)),
  odd('object 3,000 deep', deepObject(3000)),
  odd('object 40 deep', deepObject(40)),
  odd(
    '20,000 items',
    Array.from({ length: 20_000 }, () => 0),
  ),
  odd('5,000 keys', Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]))),
  odd('empty key', { '': 1 }),
  odd('__proto__ key', JSON.parse('{"__proto__":{"polluted":1}}')),
];

/** The odd values that matter most for a field of `kind`, before the ones of any kind. */
export function oddValuesFor(kind: string): Odd[] {
  if (kind === 'number') return ODD_NUMBERS;
  if (kind === 'string') return ODD_STRINGS;
  if (kind === 'object' || kind === 'array' || kind === 'other') return ODD_CONTAINERS;
  return WRONG_TYPES;
}

/** Whole request bodies, as sent: not objects, broken, deep, large. */
export const ODD_BODIES: Odd<string>[] = [
  odd('null', 'null'),
  odd('[]', '[]'),
  odd('[[[]]]', '[[[]]]'),
  odd('"text"', '"text"'),
  odd('42', '42'),
  odd('true', 'true'),
  odd('truncated', '{"a":'),
  odd('BOM', '\ufeff{}'),
  odd('array 100,000 deep', `${'['.repeat(100_000)}${']'.repeat(100_000)}`),
  odd('object 5,000 deep', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`),
  odd('1 MB string', JSON.stringify({ name: 'x'.repeat(1_000_000) })),
  odd('duplicate keys', '{"name":"a","name":"b"}'),
  odd('__proto__', '{"__proto__":{"isAdmin":true}}'),
];

/** Query-string values of any field. */
export const ODD_QUERY: Odd<string>[] = [
  odd('empty', ''),
  odd('-1', '-1'),
  odd('1.5', '1.5'),
  odd('1e309', '1e309'),
  odd('23 digits', '99999999999999999999999'),
  odd('NaN', 'NaN'),
  odd('4,000 chars', 'x'.repeat(4000)),
  odd('unicode', 'é✓🙂\u202e'),
  odd('NUL', 'a\u0000b'),
  odd('lone surrogate', 'a\ud800'),
  odd('JSON', '{"a":1}'),
  odd('list', 'a,b,c'),
  odd('padded', '  1  '),
];

/** Path parameter values, placed into the path percent-encoded. */
export const ODD_PARAMS: Odd<string>[] = [
  odd('not a UUID', 'not-a-uuid'),
  odd('missing UUID', '00000000-0000-4000-8000-000000000000'),
  odd('upper-case UUID', 'AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA'),
  odd('2,000 chars', 'x'.repeat(2000)),
  odd('unicode', 'é✓🙂'),
  odd('NUL', '\u0000'),
  odd('dot-dot', '..'),
];

/** Header sets a client might send (values are latin1: fetch sends nothing wider). */
export function oddHeaders(key: string): Odd<Record<string, string>>[] {
  return [
    odd('empty version', { 'Service-API-Version': '' }),
    odd('long version', { 'Service-API-Version': 'x'.repeat(4000) }),
    odd('latin1 version', { 'Service-API-Version': 'ÿé' }),
    odd('latin1 content type', { 'Content-Type': 'application/json; charset=ÿ' }),
    odd('text content type', { 'Content-Type': 'text/plain' }),
    odd('empty content type', { 'Content-Type': '' }),
    odd('multipart without boundary', { 'Content-Type': 'multipart/form-data' }),
    odd('lower-case bearer', { Authorization: `bearer ${key}` }),
    odd('latin1 bearer', { Authorization: `Bearer ${'ÿ'.repeat(500)}` }),
    odd('basic', { Authorization: `Basic ${key}` }),
    odd('8 KB header', { 'X-Fuzz': 'x'.repeat(8000) }),
    odd('latin1 accept', { Accept: 'ÿ/ÿ' }),
  ];
}

/** A multipart/form-data body with one part, its headers exactly as given (odd bytes included). */
export function multipartBody(partHeaders: Buffer, data: Buffer, boundary = 'fuzz-boundary'): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\n`),
    partHeaders,
    Buffer.from('\r\n\r\n'),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

/** `base` with the value at `path` replaced, containers on the way taken from `sample` where `base` lacks them. */
export function withValueAt(base: unknown, sample: unknown, path: readonly (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  const container = isContainer(base) ? base : isContainer(sample) ? sample : typeof head === 'number' ? [] : {};
  const copy = (Array.isArray(container) ? [...container] : { ...container }) as Record<string | number, unknown>;
  const sampleChild = isContainer(sample) ? (sample as Record<string | number, unknown>)[head] : undefined;
  copy[head] = withValueAt((container as Record<string | number, unknown>)[head], sampleChild, rest, value);
  return copy;
}

const isContainer = (value: unknown): value is object => typeof value === 'object' && value !== null;
