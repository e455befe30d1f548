import { describe, expect, it } from 'vitest';
import { routeGroups } from '../../functions/registry.js';
import { buildOpenApi } from '../../shared/http/openapi.js';
import { routeKey } from '../../shared/http/route.js';
import { parseBody, parseWith } from '../../shared/http/validation.js';

type Json = Record<string, any>;

const document = buildOpenApi(routeGroups()) as Json;
const documented = routeGroups().flatMap((group) => group.routes.filter((route) => !route.undocumented));
const operationOf = (method: string, path: string): Json => document.paths[path][method.toLowerCase()];
const cases = documented.map((route) => [routeKey(route), route] as const);

/** Every value under an `example` or `examples` key of the document, with where it sits. */
function exampleStrings(node: unknown, at = '', inExample = false): { at: string; value: string }[] {
  if (typeof node === 'string') return inExample ? [{ at, value: node }] : [];
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    exampleStrings(value, `${at}/${key}`, inExample || key === 'example' || key === 'examples'),
  );
}

describe('the API reference reads well (issue 29, item 4)', () => {
  it.each(cases)('%s: its summary is a short name, and what it said before is in the description', (_key, route) => {
    const { summary } = operationOf(route.method, route.path);

    expect(summary.length, summary).toBeLessThanOrEqual(40);
    expect(summary.split(/\s+/).length, summary).toBeLessThanOrEqual(6);
    expect(summary, summary).not.toMatch(/[`()[\];:]|\.$/);
    expect(summary[0], summary).toMatch(/[A-Z]/);
  });

  it('names its tags without Markdown, so the sidebar shows no raw backtick', () => {
    for (const tag of document.tags) expect(tag.name).not.toContain('`');
  });

  it('lists each path alias once as a deprecated operation that names its canonical path; the canonical operation is not deprecated', () => {
    const aliases = documented.filter((route) => route.aliasOf);

    expect(aliases.map(routeKey).sort()).toEqual(['POST /api/v2/upload-complete', 'POST /api/v2/upload-policy']);
    for (const alias of aliases) {
      const canonical = documented.find((route) => routeKey(route) === alias.aliasOf)!;
      const operation = operationOf(alias.method, alias.path);

      expect(operation.deprecated).toBe(true);
      expect(operation.description).toContain(canonical.path.replace('/api/v2', ''));
      expect(operationOf(canonical.method, canonical.path).deprecated).toBeUndefined();
      expect(operation.summary).not.toBe(operationOf(canonical.method, canonical.path).summary);
    }
  });

  it.each(cases.filter(([, route]) => route.body))('%s: its request body example passes the validation the handler runs', (_key, route) => {
    const example = operationOf(route.method, route.path).requestBody.content['application/json'].example;

    expect(() => parseBody(route.body!, example)).not.toThrow();
  });

  it.each(cases.filter(([, route]) => route.params))(
    '%s: its path parameter examples pass the validation the handler runs',
    (_key, route) => {
      const parameters = operationOf(route.method, route.path).parameters.filter((parameter: Json) => parameter.in === 'path');

      expect(() =>
        parseWith(route.params!, Object.fromEntries(parameters.map((parameter: Json) => [parameter.name, parameter.example])), '/params'),
      ).not.toThrow();
    },
  );

  it('shows a first message in one form: the thread and reply examples send `content` or `message`, not both', () => {
    for (const [method, path] of [
      ['POST', '/api/v2/threads'],
      ['POST', '/api/v2/threads/{id}/messages'],
    ] as const) {
      const example = operationOf(method, path).requestBody.content['application/json'].example;

      expect(
        Object.keys(example).filter((key) => key === 'content' || key === 'message'),
        path,
      ).toHaveLength(1);
    }
  });

  it('has no example value anywhere that is the placeholder "example"', () => {
    const placeholders = exampleStrings(document).filter(({ value }) => value.toLowerCase() === 'example');

    expect(placeholders.map(({ at }) => at)).toEqual([]);
  });

  it('declares the thumbnail as a PNG image, not JSON', () => {
    const ok = operationOf('GET', '/api/v2/markups/{id}/thumbnail').responses['200'];

    expect(Object.keys(ok.content)).toEqual(['image/png']);
    expect(ok.content['image/png'].schema).toMatchObject({ type: 'string', format: 'binary' });
  });

  it("says in its limits that a deployed API answers a body over the gateway's limit with API Gateway's own 413, not a problem", () => {
    const { description } = document.info;

    expect(description).toContain('{"message":"Request Entity Too Large"}');
    expect(description).toMatch(/413/);
    expect(description).toMatch(/10 MB/);
  });
});
