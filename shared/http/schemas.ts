import * as v from 'valibot';

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

export const Name = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters'));

/** A body that only names something (rename an item or a markup, create a workspace). */
export const NameBody = v.object({ name: Name });

/** A query-string integer within bounds. */
export function queryInteger(min: number, max: number) {
  return v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
}

/** An opaque cursor as handed out in `nextCursor`/`prevCursor`. */
export const Cursor = v.pipe(v.string(), v.minLength(1), v.maxLength(2048));

/** `workspaceId` as organization keys pass it (query or body). */
export const WorkspaceIdInput = v.object({ workspaceId: v.optional(Id) });

/** A query-string boolean: `true` or `false`. */
export const QueryBoolean = v.pipe(
  v.picklist(['true', 'false'], 'must be true or false'),
  v.transform((value) => value === 'true'),
);

/**
 * The OpenAPI shape of a page `okPage` answers: the items under `key` with `hasMore`, `nextCursor`
 * and, on lists that page back, `prevCursor`.
 */
export function pageSchema<T extends v.GenericSchema>(item: T, options: { key?: 'data' | 'items'; prevCursor?: boolean } = {}) {
  const entries: v.ObjectEntries = { [options.key ?? 'data']: v.array(item), hasMore: v.boolean(), nextCursor: v.nullable(v.string()) };
  if (options.prevCursor !== false) entries.prevCursor = v.nullable(v.string());
  return v.object(entries);
}
