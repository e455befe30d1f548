type JsonObject = Record<string, unknown>;

/** Fixed values, so the generated document (and its drift test) is the same on every run. */
/** The id every generated example uses, exported for the examples schemas give themselves (`v.examples`). */
export const SAMPLE_UUID = '3f2b8c1e-6d4a-4f0b-9c5e-2a7d1e8b4c60';
const SAMPLE_TIME = '2023-02-22T10:00:00.000Z';
const FORMATS: Readonly<Record<string, string>> = {
  uuid: SAMPLE_UUID,
  'date-time': SAMPLE_TIME,
  email: 'ada@example.com',
  uri: 'https://example.com/',
};
/** Epoch milliseconds of SAMPLE_TIME, for times the API answers as numbers (`createdAt: 1677060000000`). */
const SAMPLE_EPOCH_MS = Date.parse(SAMPLE_TIME);
const SAMPLE_URL = 'https://www.example.com/pricing';
const SAMPLE_ORIGIN = 'https://app.example.com';
const SAMPLE_TEXT = 'The logo is blurry on this page.';

/**
 * What a string field holds, by its property name, for fields whose schema says no more than
 * "a string" (most response fields; request fields checked by code the JSON Schema cannot carry,
 * such as an http(s) URL). Each is tried only where it fits the schema's lengths and pattern; a
 * schema that knows better gives `v.examples([...])`, which wins. First match wins.
 */
const NAMED_STRINGS: readonly (readonly [RegExp, string])[] = [
  [/^(id|.*Id|.*Ids)$/, SAMPLE_UUID],
  [/^(.*At|periodStart|periodEnd)$/, SAMPLE_TIME],
  [/^(.*Origin|.*Origins)$/, SAMPLE_ORIGIN],
  [/^(url|.*Url|.*Urls)$/, SAMPLE_URL],
  [/^(email|.*Email|emails)$/, 'ada@example.com'],
  [/^(.*mimeType|.*MimeType|contentType)$/, 'image/png'],
  [/^(.*[Ff]ilename)$/, 'homepage.png'],
  [/^personName$/, 'Ada Lovelace'],
  [/^(name|fallbackName|.*Name)$/, 'Homepage redesign'],
  [/^slug$/, 'homepage-redesign'],
  [/^title$/, 'Checkout walkthrough'],
  [/^(content|text|comment|note|message|insert)$/, SAMPLE_TEXT],
  [/^(nextCursor|prevCursor|cursorId|cursor|before|since)$/, 'MjAyMy0wMi0yMlQxMDowMDowMC4wMDBa'],
  [/^etag$/, '"9b2cf535f27731c974343645a3985328"'],
  [/^key$/, `uploads/${SAMPLE_UUID}/homepage.png`],
  [/^bucket$/, 'review-board-files'],
  [/^publicKey$/, 'pk_Zm9yLXRoZS1lbWJlZGRlZC1jbGllbnQtb2YtdGhpcy1zaXRl'],
  [/^signingKey$/, 'whsec_c2lnbnMtd2ViaG9vay1kZWxpdmVyaWVzLW9mLXRoaXMtcmVnaXN0cmF0aW9u'],
  [/^(token|exchangeToken)$/, 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjdXN0b21lci11c2VyLTQyIn0.c2lnbmF0dXJl'],
  [/^externalId$/, 'customer-user-42'],
  [/^(elementPath|path)$/, 'body > main > section:nth-of-type(2) > h1'],
  [/^(scopes)$/, 'workspace:read'],
  [/^(role|assignedRoleSlugs)$/, 'contributor'],
  [/^browserName$/, 'Chrome'],
  [/^(browserVersion|osVersion)$/, '120.0'],
  [/^os$/, 'macOS'],
  [/^osVersionName$/, 'Sonoma'],
  [/^platform$/, 'MacIntel'],
  [/^(expectedIss|iss)$/, 'https://auth.example.com'],
  [/^(expectedAud|aud)$/, 'review-board'],
  [/^(requiredClaims|optionalClaims|claims)$/, 'sub'],
  [/^version$/, '1'],
  [/^(.*[Ee]rror|.*[Ee]rrors)$/, 'The file could not be read as an image.'],
  [/^state$/, 'n0nce-7f3a9c2e4b1d'],
];
/** An object with one of these fields is a person, whose `name` is a person's. */
const PERSON_FIELDS = new Set(['email', 'role', 'guest', 'avatarUrl', 'externalId']);
/** Tried in order for a string that no name above fits; the first that fits the pattern and the lengths is the example. */
const STRING_CANDIDATES = ['Homepage redesign', 'review-board', '42', 'image/png', 'A1b2C3d4e5F6g7H8'];

/**
 * An example value for a JSON Schema, as the OpenAPI generator writes them beside each request and
 * success body: every property (required or not) with a value its schema accepts, the first branch
 * of a union, one item per array, a schema's own `examples` first. `name` is the property (or
 * parameter) the value is for: it picks a realistic value for a bare string (an id, a URL, a time).
 * Deterministic, so the document stays reproducible; the OpenAPI lint
 * (`no-invalid-media-type-examples`) checks each example against its schema, and a unit test
 * (test/unit/openapi-reference.test.ts) checks each request body's against the route's valibot schema.
 */
export function exampleOf(schema: JsonObject, name?: string): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  for (const union of ['anyOf', 'oneOf'] as const) {
    const branches = schema[union] as JsonObject[] | undefined;
    // A nullable value shows its non-null shape: that is what a client must be ready to read.
    if (branches?.length) return exampleOf(branches.find((branch) => branch.type !== 'null') ?? branches[0]!, name);
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((part) => exampleOf(part as JsonObject, name)));
  const type = Array.isArray(schema.type)
    ? (schema.type as string[]).find((candidate) => candidate !== 'null')
    : (schema.type as string | undefined);
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
      // The `name` of a person (a thread's `user`, a member, an external user) reads as a person's name, not a board's.
      const person = Object.keys(properties).some((property) => PERSON_FIELDS.has(property));
      return Object.fromEntries(
        Object.entries(properties).map(([property, value]) => [
          property,
          exampleOf(value, person && property === 'name' ? 'personName' : property),
        ]),
      );
    }
    case 'array': {
      const count = Math.max(1, Number(schema.minItems ?? 1));
      const items = (schema.items ?? {}) as JsonObject;
      return Array.from({ length: count }, () => exampleOf(items, name));
    }
    case 'integer':
    case 'number':
      return numberExample(schema, name);
    case 'boolean':
      return true;
    case 'string':
      return stringExample(schema, name);
    case 'null':
      return null;
    default:
      return {};
  }
}

function numberExample(schema: JsonObject, name?: string): number {
  const minimum = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  // A time the API answers as epoch milliseconds (`createdAt`), where nothing bounds it.
  if (name && /At$/.test(name) && minimum === undefined && maximum === undefined) return SAMPLE_EPOCH_MS;
  if (minimum !== undefined) return maximum !== undefined && minimum === 0 && maximum >= 1 ? 1 : minimum;
  return maximum !== undefined ? Math.min(1, maximum) : 1;
}

function stringExample(schema: JsonObject, name?: string): string {
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format) return format;
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Number.POSITIVE_INFINITY);
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  const fits = (value: string) => value.length >= min && value.length <= max && (!pattern || pattern.test(value));
  const named = name === undefined ? undefined : NAMED_STRINGS.find(([names]) => names.test(name))?.[1];
  const found =
    (named !== undefined && fits(named) ? named : undefined) ??
    STRING_CANDIDATES.find(fits) ??
    (fits('x'.repeat(min)) ? 'x'.repeat(min) : undefined);
  if (found === undefined)
    throw new Error(
      `No example string fits ${JSON.stringify(schema)}: add a candidate to STRING_CANDIDATES (shared/http/openapi-examples.ts).`,
    );
  return found;
}
