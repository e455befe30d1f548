import * as v from 'valibot';
import { integerIn } from '../schemas/builders.js';

/**
 * The schema builders, from their transport-free home (`shared/schemas/builders.ts`), and the two
 * that read query strings, which only HTTP code takes.
 */
export * from '../schemas/builders.js';

/**
 * A query-string integer within bounds: the digits the query string carries, parsed into an
 * `integerIn(min, max)`. The OpenAPI document describes a parameter by that parsed schema (the
 * generator converts parameters with `typeMode: 'output'`), so it declares `type: integer` with the
 * bounds and a typed client sends `{ limit: 5 }`.
 */
export function queryInteger(min: number, max: number) {
  return v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), integerIn(min, max));
}

/** A query-string boolean: `true` or `false`. */
export const QueryBoolean = v.pipe(
  v.picklist(['true', 'false'], 'must be true or false'),
  v.transform((value) => value === 'true'),
);
