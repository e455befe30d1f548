import { describe, expect, inject, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import { call, makeOrganization, VERSION } from '../support/api.js';
import { makeTypedMarkup } from '../support/threads.js';

describe('Versioning: Service-API-Version', () => {
  it('treats a request without the header as 2023-02-22 and echoes the version', async () => {
    const org = await makeOrganization();

    const omitted = await fetch(new URL('/api/v2/workspace', inject('localStack').stack.baseUrl), {
      headers: { Authorization: `Bearer ${org.workspaceKey}` },
    });

    expect(omitted.status).toBe(200);
    expect(omitted.headers.get('service-api-version')).toBe(VERSION);
  });

  it('treats an empty header value as another version (400)', async () => {
    const org = await makeOrganization();

    const response = await call('GET', '/workspace', { key: org.workspaceKey, headers: { 'Service-API-Version': '' } });

    expect(response.status).toBe(400);
  });

  it('answers 400 naming the supported version for any other value, before authentication', async () => {
    const response = await call('GET', '/workspace', { headers: { 'Service-API-Version': '2024-01-01' } });

    expect(response.status).toBe(400);
    expect(response.body.detail).toContain('2023-02-22');
    expect(response.headers.get('service-api-version')).toBe(VERSION);
  });

  it('echoes the version header on errors too', async () => {
    const response = await call('GET', '/workspace');

    expect(response.status).toBe(401);
    expect(response.headers.get('service-api-version')).toBe(VERSION);
  });
});

describe('Success bodies: { data } envelope', () => {
  it('wraps the payload under data with a JSON content type', async () => {
    const org = await makeOrganization();

    const response = await call('GET', '/workspace', { key: org.workspaceKey });

    expect(response.headers.get('content-type')).toBe('application/json');
    expect(Object.keys(response.body)).toEqual(['data']);
  });
});

describe('Files cannot script: every answer says X-Content-Type-Options: nosniff', () => {
  it('sends nosniff on a success, a problem, an unknown route and the thumbnail bytes', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup({ organizationId: org.organizationId, workspaceId: org.workspaceId }, 'image');

    const answers = await Promise.all([
      call('GET', '/workspace', { key: org.workspaceKey }),
      call('GET', '/workspace'),
      call('GET', '/no-such-thing'),
      fetch(new URL(`/api/v2/markups/${markup.id}/thumbnail`, inject('localStack').stack.baseUrl), {
        headers: { Authorization: `Bearer ${org.workspaceKey}` },
        redirect: 'manual',
      }),
    ]);

    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 404, expect.any(Number)]);
    for (const answer of answers) expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('Errors: application/problem+json with a request id', () => {
  it('answers an unknown route with 404 problem+json', async () => {
    const response = await call('GET', '/no-such-thing');

    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body).toMatchObject({ status: 404, title: 'Not Found', requestId: expect.any(String) });
    expect(response.body.requestId).toBe(response.headers.get('x-request-id'));
  });

  it('answers a known path with an unsupported method with 405 and Allow', async () => {
    const response = await call('PUT', '/workspace');

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'PATCH', 'POST']);
  });

  it('answers malformed JSON with 400 and a non-JSON media type with 415, never 500', async () => {
    const org = await makeOrganization();

    const malformed = await call('POST', '/workspace', {
      key: org.orgKey,
      rawBody: '{"name": ',
      headers: { 'Content-Type': 'application/json' },
    });
    const textBody = await call('POST', '/workspace', { key: org.orgKey, rawBody: 'name=x', headers: { 'Content-Type': 'text/plain' } });
    const arrayBody = await call('POST', '/workspace', { key: org.orgKey, body: ['name'] });
    const nullBody = await call('POST', '/workspace', {
      key: org.orgKey,
      rawBody: 'null',
      headers: { 'Content-Type': 'application/json' },
    });

    expect(malformed.status).toBe(400);
    expect(malformed.body.type).toContain('malformed-json');
    expect(textBody.status).toBe(415);
    expect(arrayBody.status).toBe(400);
    expect(nullBody.status).toBe(400);
  });

  it('lists every invalid field with a JSON pointer', async () => {
    const org = await makeOrganization();

    const response = await call('GET', '/workspaces', { key: org.orgKey, query: { limit: 0, sortBy: 'x', dir: 'y' } });

    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/query/dir', '/query/limit', '/query/sortBy']);
  });
});

describe('GET /openapi.json', () => {
  it('serves an OpenAPI 3.1 document with every route of every route table (but the reference page and its script)', async () => {
    const response = await call('GET', '/openapi.json');

    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    for (const r of allRoutes().filter((candidate) => !candidate.undocumented)) {
      const operation = response.body.paths[r.path]?.[r.method.toLowerCase()];
      expect(operation, `${r.method} ${r.path}`).toMatchObject({ operationId: r.operationId });
    }
  });

  it('describes request bodies and query parameters from the validation schemas', async () => {
    const response = await call('GET', '/openapi.json');

    const create = response.body.paths['/api/v2/workspace'].post;
    const list = response.body.paths['/api/v2/workspaces'].get;

    expect(create.requestBody.content['application/json'].schema).toMatchObject({
      required: ['name'],
      properties: { name: { type: 'string' } },
    });
    expect(list.parameters.map((p: { name?: string }) => p.name)).toEqual(
      expect.arrayContaining(['sortBy', 'dir', 'limit', 'before', 'since']),
    );
    expect(create.responses['201'].content['application/json'].schema.properties.data.required).toEqual(
      expect.arrayContaining(['id', 'name', 'rootFolderId', 'archiveFolderId', 'slug']),
    );
  });
});
