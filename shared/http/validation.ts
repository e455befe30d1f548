import * as v from 'valibot';
import { ValidationError, type FieldProblem } from '../errors.js';
import { withArticle } from '../english.js';
import { illFormedTextPath } from '../schemas/builders.js';

type AnySchema = v.GenericSchema<unknown, unknown>;

/**
 * Turns valibot issues into JSON Pointer problems rooted at `root` (`/body`, `/query`, `/params`).
 * A field the request leaves out reads "is required": valibot reports a missing key as a schema
 * issue that received `undefined`, which JSON and query strings cannot send, so it is never a
 * value of the wrong type.
 */
export function toFieldProblems(root: string, issues: readonly v.BaseIssue<unknown>[]): FieldProblem[] {
  return issues.map((issue) => {
    const segments = (issue.path ?? []).map((item) => String(item.key).replaceAll('~', '~0').replaceAll('/', '~1'));
    const pointer = [root, ...segments].join('/');
    return { pointer, detail: fieldDetail(issue) };
  });
}

function fieldDetail(issue: v.BaseIssue<unknown>): string {
  if (issue.kind !== 'schema') return issue.message;
  if (issue.received === 'undefined') return 'is required';
  // A value outside a fixed list is a wrong value, not a wrong type: name the values allowed.
  if (issue.type === 'picklist' || issue.type === 'enum' || issue.type === 'literal') {
    const allowed = issue.expected?.replace(/^\((.*)\)$/, '$1').split(' | ') ?? [];
    return `must be ${allowed.length > 1 ? `one of ${allowed.join(', ')}` : (allowed[0] ?? 'an allowed value')} (received ${issue.received})`;
  }
  return issue.expected && issue.received ? `Invalid type (expected ${issue.expected}, received ${issue.received})` : issue.message;
}

/** Validates `input` against `schema` or throws a ValidationError that names every bad field. */
export function parseWith<S extends AnySchema>(schema: S, input: unknown, root: string): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (!result.success) throw new ValidationError(toFieldProblems(root, result.issues));
  return result.output as v.InferOutput<S>;
}

/**
 * Validates a parsed JSON request body. No body reads as `{}` (so routes whose fields are all
 * optional take an empty request), but a body that is not a JSON object (`null`, `[]`, a string, a
 * number) is a 400 at `/body` on every route: schemas would otherwise read `null` as absent and an
 * array as an object without fields.
 */
export function parseBody<S extends AnySchema>(schema: S, body: unknown): v.InferOutput<S> {
  if (body === undefined) return parseWith(schema, {}, '/body');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const received = body === null ? 'null' : Array.isArray(body) ? 'an array' : withArticle(typeof body);
    throw new ValidationError([{ pointer: '/body', detail: `must be a JSON object (received ${received})` }]);
  }
  const illFormed = illFormedTextPath(body);
  if (illFormed) {
    const pointer = ['/body', ...illFormed.map((key) => key.replaceAll('~', '~0').replaceAll('/', '~1'))].join('/');
    throw new ValidationError([{ pointer, detail: 'holds a lone UTF-16 surrogate (such as \\ud800): send well-formed text' }]);
  }
  return parseWith(schema, body, '/body');
}
