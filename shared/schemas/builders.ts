import * as v from 'valibot';
import { describeJsonProblem, isStorableNumber, jsonValueProblem, MAX_NUMBER, MIN_MAGNITUDE } from './json-bounds.js';

/** Ids are UUID strings (spec: Conventions 1). */
export const Id = v.pipe(v.string(), v.uuid('must be a UUID'));

/** True for what `Id` accepts, for code that needs a yes or no rather than a 400. */
export const isId = (value: unknown): value is string => v.is(Id, value);

/** Longest web address the service takes. */
export const MAX_URL_LENGTH = 2048;

/** True for an absolute http or https address with a host (never `javascript:`, `data:`, `file:`). */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** An absolute http or https address, trimmed, at most MAX_URL_LENGTH characters (Markups rule 1). */
export const HttpUrl = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`),
  v.check(isHttpUrl, 'must be an absolute http or https URL'),
);

// Lone surrogates cannot be stored as sent (UTF-8 has no form for them) and make strict JSON
// parsers refuse the whole answer that shows them; control characters have no place in a name or an id.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// eslint-disable-next-line no-control-regex -- control characters are what this refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** True for well-formed UTF-16: no lone surrogate (`"\ud800"` in JSON), which no UTF-8 store or strict JSON reader takes. */
export const isWellFormedText = (value: string): boolean => !LONE_SURROGATE.test(value);

/** True for a string that can be stored and shown as sent: well-formed UTF-16, no control characters. */
export const isPrintable = (value: string): boolean => isWellFormedText(value) && !CONTROL.test(value);

/** The check of `isPrintable`, for names and ids. */
export const printable = v.check<string, string>(isPrintable, 'must be well-formed text without control characters');

/** Where in a parsed JSON value the first string (or object key) with a lone surrogate is, or undefined. */
export function illFormedTextPath(value: unknown): string[] | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, path } = next;
    if (typeof current === 'string') {
      if (!isWellFormedText(current)) return path;
    } else if (typeof current === 'object' && current !== null) {
      for (const [key, child] of Object.entries(current)) {
        if (!isWellFormedText(key)) return path;
        pending.push({ value: child, path: [...path, key] });
      }
    }
  }
  return undefined;
}

export const Name = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(200, 'must be at most 200 characters'),
  printable,
);

/** A body that only names something (rename an item or a markup, create a workspace). */
export const NameBody = v.object({ name: Name });

/** Number fields are declared within 2^53: a wider bound would let through what the table cannot store. */
function assertSafeRange(min: number, max: number): void {
  if (min < -MAX_NUMBER || max > MAX_NUMBER) throw new RangeError(`[${min}, ${max}] reaches past 2^53`);
}

/**
 * A whole JSON number within [min, max]. Every integer field of a request uses it, so none can pass
 * 2^53 (where JavaScript loses integers and the table's marshaller throws): `max` defaults to that.
 */
export function integerIn(min: number, max: number = MAX_NUMBER) {
  assertSafeRange(min, max);
  return v.pipe(
    v.number(),
    v.integer('must be a whole number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
}

/**
 * A JSON number within [min, max], fractions allowed. Every fractional field of a request uses it:
 * `max` defaults to 2^53 - 1, and magnitudes below MIN_MAGNITUDE (other than 0) are refused, as the
 * table cannot store them.
 */
export function numberIn(min: number, max: number = MAX_NUMBER) {
  assertSafeRange(min, max);
  return v.pipe(
    v.number(),
    v.finite('must be a finite number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
    v.check(isStorableNumber, `must be 0 or at least ${MIN_MAGNITUDE} in magnitude`),
  );
}

/**
 * A free-form JSON object (a Delta embed or its attributes) the table can store as sent: nested at
 * most `maxDepth` levels (the object itself is level 1), no empty keys, storable numbers. The walk is
 * iterative (see `jsonValueProblem`); the message says where inside the field the problem is.
 */
export function storableJsonObject(maxDepth: number) {
  return v.pipe(
    v.record(v.string(), v.unknown()),
    v.check(
      (value) => jsonValueProblem(value, maxDepth) === undefined,
      (issue) => describeJsonProblem(jsonValueProblem(issue.input, maxDepth) ?? { path: [], detail: 'cannot be stored' }),
    ),
  );
}

/**
 * `schema`, and its value's size as UTF-8 JSON at most `maxBytes`: for fields whose parts are each
 * bounded but together could pass DynamoDB's 400 KB item. The size is measured only once `schema`
 * accepted the value, so `JSON.stringify` walks a value of bounded nesting.
 */
export function sizedJson<S extends v.GenericSchema>(schema: S, maxBytes: number) {
  return v.pipe(
    schema,
    v.check((value) => Buffer.byteLength(JSON.stringify(value)) <= maxBytes, `must be at most ${maxBytes} bytes as JSON`),
  );
}

/** An opaque cursor as handed out in `nextCursor`/`prevCursor`. */
export const Cursor = v.pipe(v.string(), v.minLength(1), v.maxLength(2048));

/** `workspaceId` as organization keys pass it (query or body). */
export const WorkspaceIdInput = v.object({ workspaceId: v.optional(Id) });

/**
 * The OpenAPI shape of a page `okPage` answers: the items under `key` with `hasMore`, `nextCursor`
 * and, on lists that page back, `prevCursor`.
 */
export function pageSchema<T extends v.GenericSchema>(item: T, options: { key?: 'data' | 'items'; prevCursor?: boolean } = {}) {
  const entries: v.ObjectEntries = { [options.key ?? 'data']: v.array(item), hasMore: v.boolean(), nextCursor: v.nullable(v.string()) };
  if (options.prevCursor !== false) entries.prevCursor = v.nullable(v.string());
  return v.object(entries);
}
