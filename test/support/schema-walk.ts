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

const WRAPPERS = new Set(['optional', 'exact_optional', 'nullable', 'nullish', 'non_optional', 'non_nullable', 'non_nullish', 'undefinedable']);
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

/** A plausible value for `schema`: what a client would send when it sends every field. */
export function sampleOf(schema: SchemaNode, hints: SampleHints, name = ''): unknown {
  const node = unwrap(schema);
  const actions = actionsOf(node);
  const bound = (type: string) => actions.find((action) => action.type === type)?.requirement as number | undefined;
  if (OBJECTS.has(node.type) && node.entries) {
    const entries = Object.entries(node.entries).filter(([key]) => !hints.omit.has(key));
    return Object.fromEntries(entries.map(([key, entry]) => [key, sampleOf(entry, hints, key)]));
  }
  switch (node.type) {
    case 'array':
      return node.item ? [sampleOf(node.item, hints, name)] : [];
    case 'union':
    case 'variant':
      return sampleOf(node.options?.[0] as SchemaNode, hints, name);
    case 'picklist':
      return node.options?.[0];
    case 'literal':
      return node.literal;
    case 'boolean':
      return false;
    case 'number':
      return bound('min_value') ?? 1;
    case 'string':
      if (actions.some((action) => action.type === 'uuid')) return hints.idFor(name);
      if (actions.some((action) => action.type === 'regex' && String(action.requirement) === String(/^\d+$/))) return String(bound('min_value') ?? 1);
      return hints.stringFor(name) ?? 'Fuzz';
    case 'record':
    case 'unknown':
    case 'any':
      return {};
    default:
      return undefined;
  }
}
