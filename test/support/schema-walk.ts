/**
 * Reads valibot schemas as data, for tests generated from the route tables: which fields a schema
 * has, what kind each is, and a plausible value for each. Valibot schemas are plain objects: a
 * `type`, and `pipe` (the schema then its actions), `entries`, `wrapped`, `item`, `options`.
 */

export interface SchemaNode {
  type: string;
  kind: string;
  pipe?: SchemaNode[];
  entries?: Record<string, SchemaNode>;
  wrapped?: SchemaNode;
  item?: SchemaNode;
  options?: unknown[];
  literal?: unknown;
  requirement?: unknown;
}

export type FieldKind = 'number' | 'string' | 'boolean' | 'object' | 'array' | 'other';

export interface Field {
  /** Keys from the schema's root; array items are at index 0. */
  path: (string | number)[];
  kind: FieldKind;
  /** The schema of the field itself (its `pipe` holds its bounds). */
  schema: SchemaNode;
}

const WRAPPERS = new Set([
  'optional',
  'exact_optional',
  'nullable',
  'nullish',
  'non_optional',
  'non_nullable',
  'non_nullish',
  'undefinedable',
]);
const OBJECTS = new Set(['object', 'loose_object', 'strict_object', 'object_with_rest']);

/** The schema under optional/nullable wrappers. */
export function unwrap(schema: SchemaNode): SchemaNode {
  let node = schema;
  while (WRAPPERS.has(node.type) && node.wrapped) node = node.wrapped;
  return node;
}

/** The actions of a piped schema (`minValue`, `regex`, ...), by type. */
export function actionsOf(schema: SchemaNode): SchemaNode[] {
  return (schema.pipe ?? []).filter((item) => item.kind !== 'schema');
}

/** Every field of `schema` (not the root), depth first; a union is read as its options, each in turn. */
export function fieldsOf(schema: SchemaNode, prefix: (string | number)[] = []): Field[] {
  const node = unwrap(schema);
  const here = (kind: FieldKind): Field[] => (prefix.length === 0 ? [] : [{ path: prefix, kind, schema: node }]);
  if (OBJECTS.has(node.type) && node.entries) {
    return [...here('object'), ...Object.entries(node.entries).flatMap(([key, entry]) => fieldsOf(entry, [...prefix, key]))];
  }
  if (node.type === 'array' && node.item) return [...here('array'), ...fieldsOf(node.item, [...prefix, 0])];
  if (node.type === 'union' || node.type === 'variant') {
    const options = (node.options ?? []) as SchemaNode[];
    return options.flatMap((option) => fieldsOf(option, prefix));
  }
  if (node.type === 'record') return here('object');
  if (node.type === 'picklist' || node.type === 'literal') {
    const first = node.type === 'literal' ? node.literal : node.options?.[0];
    return here(typeof first === 'number' ? 'number' : typeof first === 'boolean' ? 'boolean' : 'string');
  }
  if (node.type === 'number' || node.type === 'string' || node.type === 'boolean') return here(node.type);
  return here('other');
}

/** Hints for string fields whose rules a schema states only as a regex or a check. */
export interface SampleHints {
  /** A value for a UUID field, by the field's name. */
  idFor(name: string): string;
  /** A value for a string field by its name, or undefined for the schema's own guess. */
  stringFor(name: string): string | undefined;
  /** Fields left out of the sample (cursors, which no guess makes valid). */
  omit: ReadonlySet<string>;
}

/** Longest text and list a largest value holds, so it stays within the request size the gateway takes. */
const LARGEST_TEXT = 20_000;
const LARGEST_LIST = 100;

/**
 * A plausible value for `schema`: what a client would send when it sends every field. `largest`: each
 * list and free text at its longest (text of 3-byte UTF-8 characters), each number at its maximum, so
 * every field is valid alone and the whole is as large as the schema lets it be.
 */
export function sampleOf(schema: SchemaNode, hints: SampleHints, name = '', largest = false): unknown {
  const node = unwrap(schema);
  const actions = [...actionsOf(node), ...(node.pipe?.[0]?.pipe ? actionsOf(node.pipe[0]) : [])];
  const bound = (type: string) => actions.find((action) => action.type === type)?.requirement as number | undefined;
  if (OBJECTS.has(node.type) && node.entries) {
    const entries = Object.entries(node.entries).filter(([key]) => !hints.omit.has(key));
    return Object.fromEntries(entries.map(([key, entry]) => [key, sampleOf(entry, hints, key, largest)]));
  }
  const longest = Math.min(bound('max_length') ?? 1, largest ? LARGEST_LIST : 1);
  switch (node.type) {
    case 'array':
      return node.item ? Array.from({ length: Math.max(longest, 1) }, () => sampleOf(node.item!, hints, name, largest)) : [];
    case 'union':
    case 'variant':
      return sampleOf(node.options?.[0] as SchemaNode, hints, name, largest);
    case 'picklist':
      return node.options?.[0];
    case 'literal':
      return node.literal;
    case 'boolean':
      return false;
    case 'number':
      return (largest ? bound('max_value') : undefined) ?? bound('min_value') ?? 1;
    case 'string': {
      if (actions.some((action) => action.type === 'uuid')) return hints.idFor(name);
      if (actions.some((action) => action.type === 'regex' && String(action.requirement) === String(/^\d+$/)))
        return String(bound('min_value') ?? 1);
      const hinted = hints.stringFor(name);
      const max = Math.min(bound('max_length') ?? 0, LARGEST_TEXT);
      const shaped = actions.some((action) => ['regex', 'check', 'url', 'email'].includes(action.type));
      if (!largest || max === 0 || shaped) return hinted ?? 'Fuzz';
      // A hinted value (an address) grows with ASCII, which keeps it what it is.
      return hinted === undefined ? '✓'.repeat(max) : hinted.padEnd(max, 'a');
    }
    case 'record':
    case 'unknown':
    case 'any':
      return {};
    default:
      return undefined;
  }
}
