import * as v from 'valibot';

/** Ids are UUID strings (spec: Conventions 1). */
export const Id = v.pipe(v.string(), v.uuid('must be a UUID'));

export const Name = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters'));

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
