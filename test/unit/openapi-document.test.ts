import { describe, expect, it } from 'vitest';
import { FUNCTIONS, isApiFunction, routeGroups } from '../../functions/registry.js';
import { exampleOf } from '../../shared/http/openapi-examples.js';
import { buildOpenApi } from '../../shared/http/openapi.js';

type Json = Record<string, any>;

const document = buildOpenApi(routeGroups()) as Json;
const documented = routeGroups().flatMap((group) =>
  group.routes.filter((route) => !route.undocumented).map((route) => ({ group: group.name, route })),
);
const operationOf = (method: string, path: string): Json => document.paths[path][method.toLowerCase()];

describe('the OpenAPI document a client generator can trust (issue: API reference, item 2)', () => {
  it('tags each operation with its route group, and describes every group that has documented routes', () => {
    const tagged = new Set(documented.map(({ group }) => group));

    expect(document.tags.map((tag: Json) => tag.name)).toEqual(
      FUNCTIONS.filter(isApiFunction)
        .map((fn) => fn.name)
        .filter((name) => tagged.has(name)),
    );
    for (const tag of document.tags) expect(tag.description, tag.name).toBeTruthy();
    for (const { group, route } of documented) expect(operationOf(route.method, route.path).tags, route.operationId).toEqual([group]);
  });

  it.each(documented.map(({ route }) => [`${route.method} ${route.path}`, route] as const))(
    '%s: success in { data } with an example, problems as problem+json, its permission',
    (_key, route) => {
      const operation = operationOf(route.method, route.path);
      const success = Object.entries(operation.responses as Record<string, Json>).filter(([status]) => /^2/.test(status));
      const problems = Object.entries(operation.responses as Record<string, Json>).filter(([status]) => /^[45]|default/.test(status));
      const resolve = (response: Json): Json => (response.$ref ? document.components.responses[response.$ref.split('/').pop()] : response);

      // Only an operation that always refuses (a 501 pointing elsewhere) has no success to describe.
      expect(success.length).toBe(route.responses.filter((doc) => doc.status < 300).length);
      for (const [, response] of success) {
        const json = response.content?.['application/json'];
        if (json && route.responses.find((doc) => doc.schema)?.envelope !== false) {
          expect(json.schema.required).toContain('data');
          expect(json.example).toHaveProperty('data');
        }
      }
      expect(problems.map(([status]) => status)).toEqual(expect.arrayContaining(['400', 'default']));
      for (const [status, response] of problems)
        expect(resolve(response).content, `${status}`).toHaveProperty(['application/problem+json']);
      if (route.auth === 'apiKey') {
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '403']));
        expect(operation['x-permission']).toBe(route.permission);
      } else {
        expect(operation.security).toEqual([]);
        expect(operation.description).toContain('Needs no credential.');
      }
      if (route.body) expect(operation.requestBody.content['application/json'].example).toBeDefined();
      if (route.params) expect(Object.keys(operation.responses)).toContain('404');
    },
  );

  it('declares numeric query parameters as integers with their bounds, so a client sends { limit: 5 } (issue 29, item 5)', () => {
    const parameterOf = (method: string, path: string, name: string): Json =>
      operationOf(method, path).parameters.find((parameter: Json) => parameter.name === name);
    const queryParameters = Object.values(document.paths as Record<string, Json>).flatMap((item) =>
      Object.values(item).flatMap((operation: Json) => (operation.parameters ?? []) as Json[]),
    );

    expect(parameterOf('GET', '/api/v2/markups', 'limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    expect(parameterOf('GET', '/api/v2/threads', 'offset').schema).toEqual({ type: 'integer', minimum: 0, maximum: 1_000_000 });
    expect(parameterOf('GET', '/api/v2/items/{id}/items', 'page').schema).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 1,
    });
    expect(parameterOf('GET', '/api/v2/items/{id}/items', 'limit').schema).toMatchObject({ type: 'integer', default: 50 });
    // No parameter is left a digit string: the query string still carries digits, the handler parses them.
    expect(queryParameters.filter((parameter) => parameter.schema?.pattern === '^\\d+$').map((parameter) => parameter.name)).toEqual([]);
  });

  it('leaves out the routes that are not API operations (the reference page and its script), which stay routed', () => {
    const hidden = routeGroups()
      .flatMap((group) => group.routes)
      .filter((route) => route.undocumented);

    for (const route of hidden) expect(document.paths[route.path]?.[route.method.toLowerCase()], route.path).toBeUndefined();
  });
});

describe('generated examples', () => {
  it('take constants, the first enum value, defaults, and the non-null branch of a nullable', () => {
    expect(exampleOf({ const: 'folder' })).toBe('folder');
    expect(exampleOf({ enum: ['az', 'za'] })).toBe('az');
    expect(exampleOf({ type: 'integer', default: 50, minimum: 1 })).toBe(50);
    expect(exampleOf({ anyOf: [{ type: 'null' }, { type: 'string', format: 'uuid' }] })).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('fill every property, respect bounds and patterns, and give arrays their minimum length', () => {
    const example = exampleOf({
      type: 'object',
      properties: {
        slug: { type: 'string', pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$', maxLength: 64 },
        count: { type: 'integer', minimum: 0, maximum: 100 },
        ids: { type: 'array', minItems: 2, items: { type: 'string', format: 'uuid' } },
        digits: { type: 'string', pattern: '^\\d+$' },
      },
    }) as Json;

    expect(example.slug).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
    expect(example.count).toBe(1);
    expect(example.ids).toHaveLength(2);
    expect(example.digits).toMatch(/^\d+$/);
  });

  it('fails the generation, naming the schema, when no candidate fits a pattern', () => {
    expect(() => exampleOf({ type: 'string', pattern: '^zz[0-9]{9}$' })).toThrow(/STRING_CANDIDATES/);
  });
});
