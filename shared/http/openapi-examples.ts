type JsonObject = Record<string, unknown>;

/** Fixed values, so the generated document (and its drift test) is the same on every run. */
const SAMPLE_UUID = '3f2b8c1e-6d4a-4f0b-9c5e-2a7d1e8b4c60';
const SAMPLE_TIME = '2023-02-22T10:00:00.000Z';
const FORMATS: Readonly<Record<string, string>> = {
  uuid: SAMPLE_UUID,
  'date-time': SAMPLE_TIME,
  email: 'ada@example.com',
  uri: 'https://example.com/',
};
/** Tried in order for a string with a pattern and no format; the first that fits the pattern and the lengths is the example. */
const STRING_CANDIDATES = ['example', 'review-board', '42', 'image/png', 'A1b2C3d4e5F6g7H8'];

/**
 * An example value for a JSON Schema, as the OpenAPI generator writes them beside each request and
 * success body: every property (required or not) with a value its schema accepts, the first branch
 * of a union, one item per array. Deterministic, so the document stays reproducible; the OpenAPI
 * lint (`no-invalid-media-type-examples`) checks each example against its schema, so a schema this
 * cannot satisfy fails the lint instead of publishing a wrong example.
 */
export function exampleOf(schema: JsonObject): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  for (const union of ['anyOf', 'oneOf'] as const) {
    const branches = schema[union] as JsonObject[] | undefined;
    // A nullable value shows its non-null shape: that is what a client must be ready to read.
    if (branches?.length) return exampleOf(branches.find((branch) => branch.type !== 'null') ?? branches[0]!);
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((part) => exampleOf(part as JsonObject)));
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((candidate) => candidate !== 'null') : (schema.type as string | undefined);
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
      return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, exampleOf(property)]));
    }
    case 'array': {
      const count = Math.max(1, Number(schema.minItems ?? 1));
      const items = (schema.items ?? {}) as JsonObject;
      return Array.from({ length: count }, () => exampleOf(items));
    }
    case 'integer':
    case 'number':
      return numberExample(schema);
    case 'boolean':
      return true;
    case 'string':
      return stringExample(schema);
    case 'null':
      return null;
    default:
      return {};
  }
}

function numberExample(schema: JsonObject): number {
  const minimum = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  if (minimum !== undefined) return maximum !== undefined && minimum === 0 && maximum >= 1 ? 1 : minimum;
  return maximum !== undefined ? Math.min(1, maximum) : 1;
}

function stringExample(schema: JsonObject): string {
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format) return format;
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Number.POSITIVE_INFINITY);
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  const fits = (value: string) => value.length >= min && value.length <= max && (!pattern || pattern.test(value));
  const found = STRING_CANDIDATES.find(fits) ?? (fits('x'.repeat(min)) ? 'x'.repeat(min) : undefined);
  if (found === undefined) throw new Error(`No example string fits ${JSON.stringify(schema)}: add a candidate to STRING_CANDIDATES (shared/http/openapi-examples.ts).`);
  return found;
}
