import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import { DeltaSchema, MAX_DELTA_BYTES } from '../../functions/threads/schemas.js';
import { ValidationError } from '../../shared/errors.js';
import { jsonValueProblem, MAX_NUMBER } from '../../shared/schemas/json-bounds.js';
import { integerIn, numberIn, storableJsonObject } from '../../shared/http/schemas.js';
import { parseBody, parseWith } from '../../shared/http/validation.js';
import { actionsOf, fieldsOf, type SchemaNode } from '../support/schema-walk.js';

const HUGE = 2 ** 53 + 2;

/** `{ a: { a: ... } }` nested `depth` levels (the outer object is level 1), built without recursion. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let level = 1; level < depth; level++) value = { a: value };
  return value;
}

const problemsOf = (schema: v.GenericSchema, input: unknown) => {
  try {
    parseWith(schema, input, '/body');
    return [];
  } catch (error) {
    return (error as ValidationError).errors;
  }
};

describe('integerIn and numberIn: every number field stays where JavaScript and the table hold it exactly', () => {
  it('takes whole numbers within bounds, and refuses fractions and anything past 2^53', () => {
    const schema = v.object({ depth: integerIn(0) });

    expect(problemsOf(schema, { depth: MAX_NUMBER })).toEqual([]);
    expect(problemsOf(schema, { depth: HUGE })).toEqual([{ pointer: '/body/depth', detail: `must be at most ${MAX_NUMBER}` }]);
    expect(problemsOf(schema, { depth: 1.5 })).toEqual([{ pointer: '/body/depth', detail: 'must be a whole number' }]);
    expect(problemsOf(schema, { depth: -1 })).toEqual([{ pointer: '/body/depth', detail: 'must be at least 0' }]);
  });

  it('takes fractions, 0 and -0, and refuses magnitudes the table cannot store (past 2^53, below 1e-100)', () => {
    const schema = v.object({ scale: numberIn(-10) });

    for (const scale of [0, -0, 1.5, 1e-100, MAX_NUMBER]) expect(problemsOf(schema, { scale }), String(scale)).toEqual([]);
    for (const scale of [HUGE, 1e308, 1e-200, 5e-324, -1e-101])
      expect(
        problemsOf(schema, { scale }).map((p) => p.pointer),
        String(scale),
      ).toEqual(['/body/scale']);
  });

  it('cannot be declared with bounds past 2^53', () => {
    expect(() => integerIn(0, 2 ** 60)).toThrow(RangeError);
    expect(() => numberIn(-(2 ** 60))).toThrow(RangeError);
  });
});

describe('storableJsonObject and jsonValueProblem: free-form JSON the table can store as sent', () => {
  it('takes an object nested up to the bound and refuses one level more, saying where', () => {
    const schema = v.object({ embed: storableJsonObject(10) });

    expect(problemsOf(schema, { embed: nested(10) })).toEqual([]);
    expect(problemsOf(schema, { embed: nested(11) })).toEqual([
      { pointer: '/body/embed', detail: `nests deeper than 10 levels (at ${Array(10).fill('a').join('/')})` },
    ]);
  });

  it('refuses 100,000 levels without overflowing the stack', () => {
    expect(jsonValueProblem(nested(100_000), 10)).toMatchObject({ detail: 'nests deeper than 10 levels' });
    expect(jsonValueProblem(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), 32)).toMatchObject({
      detail: 'nests deeper than 32 levels',
    });
  });

  it('refuses an empty key and unstorable numbers anywhere inside, and takes arrays, strings and nulls', () => {
    expect(jsonValueProblem({ a: [{ '': 1 }] }, 10)).toEqual({ path: ['a', '0'], detail: 'holds an empty key' });
    expect(jsonValueProblem({ a: [1, { size: HUGE }] }, 10)?.path).toEqual(['a', '1', 'size']);
    expect(jsonValueProblem({ a: [1e-200] }, 10)?.path).toEqual(['a', '0']);
    expect(jsonValueProblem({ a: ['', null, true, 'é🙂', [], {}], b: -0 }, 10)).toBeUndefined();
  });

  it('bounds a whole Delta to MAX_DELTA_BYTES of JSON, at /message', () => {
    const message = (length: number) => ({ ops: [...Array.from({ length }, () => ({ insert: 'x'.repeat(20_000) })), { insert: '\n' }] });

    expect(problemsOf(v.object({ message: DeltaSchema }), { message: message(4) })).toEqual([]);
    expect(problemsOf(v.object({ message: DeltaSchema }), { message: message(6) })).toEqual([
      { pointer: '/body/message', detail: `must be at most ${MAX_DELTA_BYTES} bytes as JSON` },
    ]);
  });
});

describe('parseBody: a JSON body is an object or nothing', () => {
  const schema = v.object({ name: v.optional(v.string()) });

  it('reads no body as {}', () => {
    expect(parseBody(schema, undefined)).toEqual({});
  });

  it.each([[null], [[]], [[[[]]]], ['text'], [42], [false]])('refuses %j at /body', (body) => {
    expect(() => parseBody(schema, body)).toThrow(ValidationError);
    try {
      parseBody(schema, body);
    } catch (error) {
      expect((error as ValidationError).errors).toEqual([{ pointer: '/body', detail: expect.stringMatching(/^must be a JSON object/) }]);
    }
  });
});

describe('every route bounds its input (generated from allRoutes(), so a new route cannot skip it)', () => {
  const inputs = allRoutes().flatMap((route) =>
    (['params', 'query', 'body'] as const).flatMap((part) =>
      route[part] ? fieldsOf(route[part] as unknown as SchemaNode).map((field) => ({ route, part, field })) : [],
    ),
  );
  const label = ({ route, part, field }: (typeof inputs)[number]) => `${route.method} ${route.path} ${part}/${field.path.join('/')}`;

  it('finds the fields of every route with input', () => {
    expect(inputs.length).toBeGreaterThan(100);
  });

  it('gives every JSON number field a whole-number or finite rule and bounds within 2^53 (integerIn, numberIn)', () => {
    const numbers = inputs.filter(({ field }) => field.schema.type === 'number');
    const unbounded = numbers.filter(({ field }) => {
      const actions = actionsOf(field.schema);
      const bound = (type: string) => actions.find((action) => action.type === type)?.requirement as number | undefined;
      const min = bound('min_value');
      const max = bound('max_value');
      const exact = actions.some((action) => ['integer', 'safe_integer', 'finite'].includes(action.type));
      return !exact || min === undefined || max === undefined || min < -MAX_NUMBER || max > MAX_NUMBER;
    });

    expect(numbers.length).toBeGreaterThan(20);
    expect(unbounded.map(label)).toEqual([]);
  });

  it('checks every free-form JSON field (storableJsonObject)', () => {
    const freeForm = inputs.filter(({ field }) => field.schema.type === 'record' || field.schema.type === 'unknown');
    const unchecked = freeForm.filter(({ field }) => !actionsOf(field.schema).some((action) => action.type === 'check'));

    expect(unchecked.map(label)).toEqual([]);
  });
});
