import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { describe, expect, inject, it } from 'vitest';
import { createReviewBoardClient, type components } from '../../clients/typescript/index.js';
import { GENERATED_FILES } from '../../infra/tools/generated-routes.js';
import { makeOrganization } from '../support/api.js';
import { CLIENT_DOCS, codeBlocks, installPackedClient, typeCheck } from '../support/client-package.js';
import { DESKTOP, BROWSER_CONTEXT, delta } from '../support/threads.js';

type Json = Record<string, any>;

/**
 * The typed TypeScript client (clients/typescript: openapi-fetch over openapi-typescript's types of
 * the OpenAPI document) against the local stack. Its calls are type-checked against the document,
 * and every answer is validated against the document's schema for that operation and status, so a
 * drift between the document and what the service sends fails here, at compile time or at run time.
 */
const document = JSON.parse(readFileSync(GENERATED_FILES.openApi, 'utf8')) as Json;
// The document's schemas are JSON Schema 2020-12; formats (uuid, date-time) are not what this checks.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(document, 'openapi.json');
const validators = new Map<string, ValidateFunction>();

/** Validates a body against the schema the document gives this operation's answer, following `$ref`s. */
function expectDocumented(method: string, path: string, status: number, body: unknown): void {
  const key = `${method} ${path} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    const responses = document.paths[path][method.toLowerCase()].responses as Record<string, Json>;
    const documented = responses[String(status)] ? String(status) : 'default';
    const pointer: string =
      responses[documented]!.$ref ?? `#/paths/${path.replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${documented}`;
    const response = responses[documented]!.$ref ? document.components.responses[pointer.split('/').pop()!] : responses[documented];
    const [mediaType] = Object.keys(response.content);
    validate = ajv.compile({ $ref: `openapi.json${pointer}/content/${mediaType!.replace(/\//g, '~1')}/schema` });
    validators.set(key, validate);
  }
  expect(validate(body), `${key}: ${ajv.errorsText(validate.errors)}`).toBe(true);
}

describe('the typed TypeScript client against the local stack (API reference issue, item 3)', () => {
  it('creates a markup, lists and reads it, opens a thread and replies, each answer as the document says', async () => {
    const org = await makeOrganization();
    const client = createReviewBoardClient({ baseUrl: inject('localStack').stack.baseUrl, credential: org.workspaceKey });

    const created = await client.POST('/api/v2/markups/url', { body: { url: 'https://example.com/typed-client', name: 'Typed client' } });
    expect(created.response.status).toBe(200);
    expectDocumented('POST', '/api/v2/markups/url', 200, created.data);
    const markup = created.data!.data;

    const listed = await client.GET('/api/v2/markups', { params: { query: { limit: 10 } } });
    expect(listed.response.status).toBe(200);
    expectDocumented('GET', '/api/v2/markups', 200, listed.data);
    expect(listed.data!.data.data.map((entry) => entry.id)).toContain(markup.id);

    const read = await client.GET('/api/v2/markups/{id}', { params: { path: { id: markup.id } } });
    expect(read.response.status).toBe(200);
    expectDocumented('GET', '/api/v2/markups/{id}', 200, read.data);
    expect(read.data!.data).toMatchObject({ id: markup.id, name: 'Typed client' });

    const url = 'https://example.com/typed-client';
    const thread = await client.POST('/api/v2/threads', {
      body: {
        projectId: markup.id,
        isImageThread: false,
        url,
        canonicalUrl: url,
        elements: [{ elementPath: 'html > body > h1', offsetXPercentage: 12.5, offsetYPercentage: 50 }],
        elementParents: [{ url, canonicalUrl: url, path: 'html > body', depth: 1 }],
        offsetXPercentage: 25,
        offsetYPercentage: 40,
        viewModeId: DESKTOP,
        message: delta('Typed from the client'),
        browserContext: BROWSER_CONTEXT,
      },
    });
    expect(thread.response.status, JSON.stringify(thread.error)).toBe(200);
    expectDocumented('POST', '/api/v2/threads', 200, thread.data);
    const threadId = thread.data!.data.id;

    const reply = await client.POST('/api/v2/threads/{id}/messages', {
      params: { path: { id: threadId } },
      body: { content: 'A typed reply' },
    });
    expect(reply.response.status, JSON.stringify(reply.error)).toBe(200);
    expectDocumented('POST', '/api/v2/threads/{id}/messages', 200, reply.data);
    expect(reply.data!.data).toMatchObject({ threadId, content: 'A typed reply' });
  });

  it("answers a refusal as problem+json, typed as the document's Problem", async () => {
    const org = await makeOrganization();
    const client = createReviewBoardClient({ baseUrl: inject('localStack').stack.baseUrl, credential: org.workspaceKey });
    const anonymous = createReviewBoardClient({ baseUrl: inject('localStack').stack.baseUrl });

    const missing = await client.GET('/api/v2/markups/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
    const invalid = await client.GET('/api/v2/markups/{id}', { params: { path: { id: 'not-a-uuid' } } });
    const unauthorized = await anonymous.GET('/api/v2/markups', {});

    for (const [answer, status] of [
      [missing, 404],
      [invalid, 400],
      [unauthorized, 401],
    ] as const) {
      expect(answer.response.status).toBe(status);
      expect(answer.response.headers.get('content-type')).toBe('application/problem+json');
      const problem: components['schemas']['Problem'] | undefined = answer.error;
      expect(problem).toMatchObject({ status, type: expect.stringMatching(/^urn:review-board:problem:/), requestId: expect.any(String) });
      expectDocumented('GET', answer === unauthorized ? '/api/v2/markups' : '/api/v2/markups/{id}', status, problem);
    }
    expect(invalid.error!.errors?.map((entry) => entry.pointer)).toEqual(['/params/id']);
  });
});

describe('the packed TypeScript client runs the usage page against the local stack (issue 29, item 5)', () => {
  it('creates, lists with limit 5 and reads problems as docs/typescript-client.md shows', async () => {
    const org = await makeOrganization();
    const { project } = await installPackedClient({ extra: ['@types/node'] });
    try {
      const page = readFileSync(CLIENT_DOCS, 'utf8');
      const tsconfig = codeBlocks(page, 'json')
        .map((block) => JSON.parse(block))
        .find((json) => json.compilerOptions);
      writeFileSync(join(project, 'docs.ts'), codeBlocks(page, 'ts').join('\n'));
      writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files: ['docs.ts'] }));
      expect(await typeCheck(project, ['-p', 'tsconfig.json', '--outDir', 'out'])).toEqual({ code: 0, output: '' });

      const { stdout } = await promisify(execFile)(process.execPath, [join(project, 'out/docs.js')], {
        env: { ...process.env, REVIEW_BOARD_URL: inject('localStack').stack.baseUrl, REVIEW_BOARD_API_KEY: org.workspaceKey },
      });

      const created = /^created (\S+) \(Home page, webpage\)$/m.exec(stdout);
      expect(created, stdout).not.toBeNull();
      expect(stdout).toContain(`listed ${created![1]} Home page`);
      expect(stdout).toMatch(/^not found: 404 urn:review-board:problem:not-found: .+ \(request \S+\)$/m);
      expect(stdout).toMatch(/^refused: 400 urn:review-board:problem:validation-error: .+ \[\/body\/url\] \(request \S+\)$/m);
      // Each field's text is said once (detail), not again from errors (a new user's report).
      const refused = stdout.split('\n').find((line) => line.startsWith('refused: ')) ?? '';
      expect(refused.split('must be an absolute http or https URL').length - 1).toBe(1);
    } finally {
      rmSync(dirname(project), { recursive: true, force: true });
    }
  }, 180_000);
});
