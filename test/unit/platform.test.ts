import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { generateApiKey, parseApiKey, secretMatches } from '../../shared/auth/api-key-format.js';
import { ConfigError, parseConfig } from '../../shared/config.js';
import { slugCandidate, slugify } from '../../shared/domain/workspaces/slugs.js';
import { createApiHandler } from '../../shared/http/api-handler.js';
import { decodeCursor, encodeCursor } from '../../shared/db/core/cursor.js';
import { ok, operation, routeTable } from '../../shared/http/route.js';
import { compileTemplates, templateMatches } from '../../shared/http/route-match.js';
import { toFieldProblems } from '../../shared/http/validation.js';
import { compileRoutes } from '../../infra/local/gateway.js';
import { decodeEventKey } from '../../functions/upload-confirmed/handler.js';

const key = Buffer.alloc(32, 7);
const context = {} as Context;
const sample = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../events/${file}`, import.meta.url), 'utf8')) as APIGatewayProxyEventV2;

describe('cursors are opaque and tamper-evident', () => {
  it('round-trips a position for the list it was made for', () => {
    const cursor = encodeCursor(key, 'workspaces:name:asc', { PK: 'a', SK: 'b' });

    expect(decodeCursor(key, 'workspaces:name:asc', cursor, 'before')).toEqual({ PK: 'a', SK: 'b' });
  });

  it('refuses a changed payload, another list, another key and garbage with a 400', () => {
    const cursor = encodeCursor(key, 'workspaces:name:asc', { PK: 'a' });
    const [payload, signature] = cursor.split('.');
    const changed = `${Buffer.from(JSON.stringify({ l: 'workspaces:name:asc', p: { PK: 'b' } })).toString('base64url')}.${signature}`;

    for (const [list, candidate, secret] of [
      ['workspaces:name:asc', changed, key],
      ['workspaces:name:desc', cursor, key],
      ['workspaces:name:asc', cursor, Buffer.alloc(32, 8)],
      ['workspaces:name:asc', `${payload}`, key],
      ['workspaces:name:asc', '...', key],
    ] as const) {
      expect(() => decodeCursor(secret, list, candidate, 'before')).toThrow(expect.objectContaining({ status: 400 }));
    }
  });
});

describe('workspace slugs', () => {
  it('derives a slug from a display name', () => {
    expect(slugify('  Café Plans — Q3 2026!  ')).toBe('cafe-plans-q3-2026');
    expect(slugify('***')).toBe('workspace');
    expect(slugify('x'.repeat(100)).length).toBeLessThanOrEqual(59);
  });

  it('numbers the candidates for a taken slug from 2', () => {
    expect([0, 1, 2].map((attempt) => slugCandidate('site', attempt))).toEqual(['site', 'site-2', 'site-3']);
  });
});

describe('API key format', () => {
  it('parses what it generates and matches only the right secret', () => {
    const generated = generateApiKey();
    const parsed = parseApiKey(generated.apiKey);

    expect(parsed?.keyId).toBe(generated.keyId);
    expect(secretMatches(parsed!.secret, generated.secretHash)).toBe(true);
    expect(secretMatches(`${parsed!.secret.slice(0, -1)}x`, generated.secretHash)).toBe(false);
  });

  it('does not take a JWT-shaped exchange token for an API key', () => {
    expect(parseApiKey('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln')).toBeUndefined();
  });
});

describe('configuration is parsed once and fails fast', () => {
  it('names every bad variable', () => {
    expect(() => parseConfig({ TABLE_NAME: 't', CONVERSION_QUEUE_URL: 'not a url', STACK_MODE: 'moon' })).toThrow(ConfigError);
    expect(() => parseConfig({ TABLE_NAME: 't', STACK_MODE: 'moon' })).toThrow(/STACK_MODE/);
  });

  it('refuses to hand out a table name the function was not given', () => {
    const config = parseConfig({});

    expect(() => config.tableName).toThrow(/TABLE_NAME/);
    expect(config.mode).toBe('aws');
  });
  it('keeps exchange tokens at most an hour: EXCHANGE_TOKEN_TTL_SECONDS above 3600 fails the cold start (DESIGN "Trust rules")', () => {
    expect(parseConfig({}).exchangeTokenTtlSeconds).toBe(300);
    expect(parseConfig({ EXCHANGE_TOKEN_TTL_SECONDS: '3600' }).exchangeTokenTtlSeconds).toBe(3600);
    for (const value of ['3601', '86400', '1e9', 'Infinity']) {
      expect(() => parseConfig({ EXCHANGE_TOKEN_TTL_SECONDS: value }), value).toThrow(/EXCHANGE_TOKEN_TTL_SECONDS: must be at most 3600/);
    }
    expect(() => parseConfig({ EXCHANGE_TOKEN_TTL_SECONDS: '29' })).toThrow(/EXCHANGE_TOKEN_TTL_SECONDS/);
  });

  it('enables the optional EPS converter only for EPS_CONVERTER=ghostscript', () => {
    expect(parseConfig({}).epsConverter).toBe(false);
    expect(parseConfig({ EPS_CONVERTER: '' }).epsConverter).toBe(false);
    expect(parseConfig({ EPS_CONVERTER: 'true' }).epsConverter).toBe(false);
    expect(parseConfig({ EPS_CONVERTER: 'ghostscript' }).epsConverter).toBe(true);
  });
});

describe('route matching as API Gateway does it', () => {
  const target = (paths: string[]) => ({
    name: 't',
    handler: async () => ({ statusCode: 200 }),
    routes: routeTable(
      Object.fromEntries(
        paths.map((path) => [
          `GET ${path}`,
          operation({ operationId: path, summary: '', auth: 'none', responses: [], handle: async () => ok(null) }),
        ]),
      ),
    ),
  });

  it('prefers the most specific template and decodes path parameters', () => {
    const match = compileRoutes([target(['/api/v2/markups/{id}', '/api/v2/markups/usage']), { ...target([]), isDefault: true }]);

    expect(match('GET', '/api/v2/markups/usage')?.key).toBe('GET /api/v2/markups/usage');
    expect(match('GET', '/api/v2/markups/a%20b')?.params).toEqual({ id: 'a b' });
    expect(match('POST', '/api/v2/markups/usage')?.key).toBe('$default');
  });

  it('matches one segment per parameter', () => {
    expect(templateMatches('/api/v2/items/{id}/move', '/api/v2/items/1/move')).toBe(true);
    expect(templateMatches('/api/v2/items/{id}', '/api/v2/items/1/move')).toBe(false);
    expect(templateMatches('/api/v2/items/{id}', '/api/v2/items/')).toBe(false);
  });

  it('lists for a 405 exactly the methods the router serves at that path, a trailing slash included', () => {
    const routes = routeTable({
      'GET /api/v2/workspaces': operation({ operationId: 'list', summary: '', auth: 'none', responses: [], handle: async () => ok(null) }),
      'POST /api/v2/workspace': operation({
        operationId: 'create',
        summary: '',
        auth: 'none',
        responses: [],
        handle: async () => ok(null),
      }),
    });
    const matcher = compileTemplates(routes);

    expect(matcher.match('GET', '/api/v2/workspaces/')?.route.operationId).toBe('list');
    expect(matcher.methodsAt('/api/v2/workspaces/')).toEqual(['GET']);
    expect(matcher.methodsAt('/api/v2/workspaces/x')).toEqual([]);
  });
});

describe('the API handler maps every failure to problem+json in one place', () => {
  const handler = createApiHandler(
    routeTable({
      'POST /api/v2/things': operation({
        operationId: 'createThing',
        summary: '',
        auth: 'none',
        body: v.object({ size: v.number() }),
        responses: [],
        handle: async ({ body }) => {
          if (body.size === 13) throw new Error('database exploded with secret details');
          if (body.size === 99) await new Promise((resolve) => setTimeout(resolve, 2_000));
          return ok(body);
        },
      }),
    }),
    { allRoutes: [] },
  );
  const post = (body: string): APIGatewayProxyEventV2 => ({
    ...sample('apigw-http/create-workspace.json'),
    routeKey: 'POST /api/v2/things',
    rawPath: '/api/v2/things',
    body,
  });

  it('answers the sample unknown-route event with 404 problem+json and the request id', async () => {
    const event = sample('apigw-http/unknown-route.json');

    const result = (await handler(event, context)) as APIGatewayProxyStructuredResultV2;

    expect(result.statusCode).toBe(404);
    expect(result.headers?.['Content-Type']).toBe('application/problem+json');
    expect(JSON.parse(result.body!)).toMatchObject({ status: 404, requestId: event.requestContext.requestId });
  });

  it('hides the details of an unexpected error behind a generic 500', async () => {
    const result = (await handler(post('{"size":13}'), context)) as APIGatewayProxyStructuredResultV2;

    expect(result.statusCode).toBe(500);
    expect(result.body).not.toContain('secret');
  });

  it('answers a request that ran out of its time with 503 problem+json (retry), never a 500', async () => {
    const short = { getRemainingTimeInMillis: () => 100 } as unknown as Context;

    const result = (await handler(post('{"size":99}'), short)) as APIGatewayProxyStructuredResultV2;

    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body!)).toMatchObject({ status: 503, type: 'urn:review-board:problem:timeout' });
  });

  it('answers 200 { data } for a valid body and 400 with pointers for an invalid one', async () => {
    const good = (await handler(post('{"size":2}'), context)) as APIGatewayProxyStructuredResultV2;
    const bad = (await handler(post('{"size":"big"}'), context)) as APIGatewayProxyStructuredResultV2;

    expect(JSON.parse(good.body!)).toEqual({ data: { size: 2 } });
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body!).errors).toEqual([{ pointer: '/body/size', detail: expect.stringContaining('number') }]);
  });

  it('says a missing required field "is required", at any depth, and keeps the type error for a wrong value', () => {
    const schema = v.object({ token: v.string(), items: v.array(v.object({ id: v.string() })), name: v.optional(v.string()) });

    const missing = v.safeParse(schema, { items: [{}] });
    const wrong = v.safeParse(schema, { token: 5, items: [] });

    expect(toFieldProblems('/body', missing.issues!)).toEqual([
      { pointer: '/body/token', detail: 'is required' },
      { pointer: '/body/items/0/id', detail: 'is required' },
    ]);
    expect(toFieldProblems('/query', wrong.issues!)).toEqual([
      { pointer: '/query/token', detail: 'Invalid type (expected string, received 5)' },
    ]);
  });

  it('says a value outside a list of allowed values "must be one of" them, not "Invalid type" (issue 29, a new user)', () => {
    const schema = v.object({ resourceType: v.picklist(['message_attachment', 'markup_asset']), mode: v.literal('desktop') });

    const wrong = v.safeParse(schema, { resourceType: 'nope', mode: 'phone' });

    expect(toFieldProblems('/body', wrong.issues!)).toEqual([
      { pointer: '/body/resourceType', detail: 'must be one of "message_attachment", "markup_asset" (received "nope")' },
      { pointer: '/body/mode', detail: 'must be "desktop" (received "phone")' },
    ]);
  });

  it('answers a request without a required field with a 400 that reads "is required"', async () => {
    const result = (await handler(post('{}'), context)) as APIGatewayProxyStructuredResultV2;

    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body!)).toMatchObject({
      detail: '/body/size: is required',
      errors: [{ pointer: '/body/size', detail: 'is required' }],
    });
  });
});

describe('S3 notification keys', () => {
  it('decodes keys the way S3 encodes them in events', () => {
    expect(decodeEventKey('uploads/a/b/home+page+%C3%A9t%C3%A9%2B1.png')).toBe('uploads/a/b/home page été+1.png');
  });
});
