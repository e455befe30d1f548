import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import type { Principal } from '../../shared/auth/principal.js';
import { claimIdempotencyKey } from '../../shared/db/idempotency.js';
import type { ServiceError } from '../../shared/errors.js';
import { problemHeaders } from '../../shared/http/errors.js';
import { idempotencyScope, runIdempotently } from '../../shared/http/idempotency.js';
import { routeKey } from '../../shared/http/route.js';
import { localStack, makeOrganization, VERSION, type ApiResponse, type Org } from '../support/api.js';
import { makeEndUser } from '../support/end-users.js';
import { setPlan } from '../support/fixtures.js';
import { customerKeyPair } from '../support/installations.js';
import { expectProblem } from '../support/problems.js';
import { createThread, makeTypedMarkup, threadBody } from '../support/threads.js';
import { pngBytes, rootFolderOf, uploadFile } from '../support/uploads.js';
import { LOOPBACK_HOOK_URL } from '../support/webhooks.js';
import { usedThisMonth } from '../support/workspaces.js';

interface Send {
  key: string;
  idempotencyKey?: string;
  query?: Record<string, string>;
  json?: unknown;
  /** A body sent as these exact bytes (a multipart form with a fixed boundary, so a retry is byte for byte the same). */
  raw?: { bytes: Buffer; contentType: string };
}

/** One request through the local gateway, with an `Idempotency-Key` when given. */
async function send(method: string, path: string, options: Send): Promise<ApiResponse> {
  const { stack } = localStack();
  const url = new URL(`/api/v2${path}`, stack.baseUrl);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = { 'Service-API-Version': VERSION, Authorization: `Bearer ${options.key}` };
  if (options.idempotencyKey !== undefined) headers['Idempotency-Key'] = options.idempotencyKey;
  let body: string | Buffer | undefined;
  if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  if (options.raw) {
    headers['Content-Type'] = options.raw.contentType;
    body = options.raw.bytes;
  }
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text,
  };
}

const createUrlMarkup = (key: string, idempotencyKey: string | undefined, url = 'https://example.com/idempotent') =>
  send('POST', '/markups/url', { key, idempotencyKey, json: { url } });

/** Every markup of the workspace, as GET /markups lists them to `key`. */
async function markupIds(key: string): Promise<string[]> {
  const ids: string[] = [];
  let before: string | undefined;
  do {
    const page = await send('GET', '/markups', { key, query: { limit: '100', ...(before ? { before } : {}) } });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    ids.push(...page.body.data.data.map((markup: { id: string }) => markup.id));
    before = page.body.data.nextCursor ?? undefined;
  } while (before);
  return ids;
}

const replayed = (response: ApiResponse) => response.headers.get('idempotent-replayed') === 'true';

/** A multipart form of one PNG, with a fixed boundary: the same bytes every time it is sent. */
async function pngForm(): Promise<{ bytes: Buffer; contentType: string }> {
  const boundary = 'idempotency-test-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="pixel.png"\r\nContent-Type: image/png\r\n\r\n`;
  const bytes = Buffer.concat([Buffer.from(head), await pngBytes(), Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { bytes, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A request to each idempotent route, made for one organization (path and body; the key is the caller's). */
type RouteCase = (org: Org) => Promise<{ path: string; key?: string } & Omit<Send, 'key' | 'idempotencyKey'>>;

const ROUTE_CASES: Record<string, RouteCase> = {
  'POST /api/v2/workspace': async (org) => ({
    path: '/workspace',
    key: org.orgKey,
    json: { name: `Idempotent ${randomUUID().slice(0, 6)}` },
  }),
  'POST /api/v2/items': async (org) => ({
    path: '/items',
    json: { parentFolderId: await rootFolderOf(org.workspaceKey), name: `Folder ${randomUUID().slice(0, 6)}` },
  }),
  'POST /api/v2/markups/url': async () => ({ path: '/markups/url', json: { url: 'https://example.com/route-case' } }),
  'POST /api/v2/markups/from-files': async (org) => {
    const { fileId } = await uploadFile(org.workspaceKey, { bytes: await pngBytes(), filename: 'pixel.png', contentType: 'image/png' });
    return { path: '/markups/from-files', json: { workspaceId: org.workspaceId, fileIds: [fileId] } };
  },
  'POST /api/v2/markups/file': async (org) => ({ path: '/markups/file', query: { workspaceId: org.workspaceId }, raw: await pngForm() }),
  'POST /api/v2/markups/bulk/from-url': async () => ({
    path: '/markups/bulk/from-url',
    json: { items: [{ url: 'https://example.com/a' }, { url: 'https://example.com/b' }] },
  }),
  'POST /api/v2/uploads/upload-policy': async (org) => ({
    path: '/uploads/upload-policy',
    json: {
      resourceType: 'markup_asset',
      resourceId: await rootFolderOf(org.workspaceKey),
      filename: 'pixel.png',
      contentType: 'image/png',
      filesize: 100,
    },
  }),
  'POST /api/v2/upload-policy': async (org) => ({
    path: '/upload-policy',
    json: {
      resourceType: 'markup_asset',
      resourceId: await rootFolderOf(org.workspaceKey),
      filename: 'pixel.png',
      contentType: 'image/png',
      filesize: 100,
    },
  }),
  'POST /api/v2/threads': async (org) => ({ path: '/threads', json: threadBody(await makeTypedMarkup(org, 'webpage')) }),
  'POST /api/v2/threads/{id}/messages': async (org) => {
    const thread = await createThread(org.workspaceKey, await makeTypedMarkup(org, 'webpage'));
    return { path: `/threads/${thread.id}/messages`, json: { content: 'A reply sent once' } };
  },
  'POST /api/v2/installations': async () => ({ path: '/installations', json: { signingKey: customerKeyPair().publicKey } }),
  'POST /api/v2/webhook-registrations': async () => ({ path: '/webhook-registrations', json: { url: LOOPBACK_HOOK_URL } }),
};

describe('Idempotency-Key on creates (issue 17, item 4)', () => {
  it('creates one markup and charges once for 20 parallel requests with one key, round after round', async () => {
    const org = await makeOrganization();
    const rounds = 10;

    for (let round = 0; round < rounds; round += 1) {
      const key = `race-${round}-${randomUUID()}`;
      const markupsBefore = (await markupIds(org.workspaceKey)).length;
      const usedBefore = await usedThisMonth(org.workspaceKey);

      const answers = await Promise.all(
        Array.from({ length: 20 }, () => createUrlMarkup(org.workspaceKey, key, `https://example.com/race-${round}`)),
      );

      for (const answer of answers) {
        expect([200, 409], JSON.stringify(answer.body)).toContain(answer.status);
        if (answer.status === 409) expect(answer.body.type).toBe('urn:review-board:problem:idempotent-request-in-progress');
      }
      const successes = answers.filter((answer) => answer.status === 200);
      const originals = successes.filter((answer) => !replayed(answer));
      expect(originals, `round ${round}`).toHaveLength(1);
      const original = originals[0]!;
      for (const success of successes) expect(success.body).toEqual(original.body);
      const ids = await markupIds(org.workspaceKey);
      expect(ids, `round ${round}`).toHaveLength(markupsBefore + 1);
      expect(ids).toContain(original.body.data.id);
      expect(await usedThisMonth(org.workspaceKey)).toBe(usedBefore + 1);
      const replay = await createUrlMarkup(org.workspaceKey, key, `https://example.com/race-${round}`);
      expect(replay.status).toBe(original.status);
      expect(replay.body).toEqual(original.body);
      expect(replayed(replay)).toBe(true);
      expect(replay.headers.get('x-request-id')).not.toBe(original.headers.get('x-request-id'));
    }
  }, 120_000);

  it("answers 422 when the key comes again with another body, and keeps each credential's keys apart", async () => {
    const org = await makeOrganization();
    const key = `shared-${randomUUID()}`;
    const first = await createUrlMarkup(org.workspaceKey, key, 'https://example.com/first');
    expect(first.status).toBe(200);

    const otherBody = await createUrlMarkup(org.workspaceKey, key, 'https://example.com/second');
    const otherCredential = await createUrlMarkup(org.orgKey, key, 'https://example.com/first');

    expectProblem(otherBody, 422);
    expect(otherBody.body).toMatchObject({ type: 'urn:review-board:problem:idempotency-key-reused', title: 'Idempotency Key Reused' });
    expect(otherBody.body.detail).toMatch(/Idempotency-Key was used with another request/);
    expect(otherCredential.status).toBe(200);
    expect(replayed(otherCredential)).toBe(false);
    expect(otherCredential.body.data.id).not.toBe(first.body.data.id);
    expect(await markupIds(org.workspaceKey)).toHaveLength(2);
    expect(await usedThisMonth(org.workspaceKey)).toBe(2);
  });

  it("keeps an end user's key across re-minted exchange tokens, apart from another end user's", async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const user = await makeEndUser({ organizationId: org.organizationId, workspaceId: org.workspaceId });
    const sameUserLater = await makeEndUser({
      organizationId: org.organizationId,
      workspaceId: org.workspaceId,
      userId: user.userId,
      externalId: user.externalId,
    });
    const otherUser = await makeEndUser({ organizationId: org.organizationId, workspaceId: org.workspaceId });
    const key = `end-user-${randomUUID()}`;
    const body = threadBody(markup);

    const first = await send('POST', '/threads', { key: user.token, idempotencyKey: key, json: body });
    const retried = await send('POST', '/threads', { key: sameUserLater.token, idempotencyKey: key, json: body });
    const other = await send('POST', '/threads', { key: otherUser.token, idempotencyKey: key, json: body });

    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(sameUserLater.token).not.toBe(user.token);
    expect(replayed(retried)).toBe(true);
    expect(retried.body).toEqual(first.body);
    expect(other.status).toBe(200);
    expect(replayed(other)).toBe(false);
    expect(other.body.data.id).not.toBe(first.body.data.id);
  });

  it('answers 422 when the key comes again on another route', async () => {
    const org = await makeOrganization();
    const key = `routes-${randomUUID()}`;
    expect((await createUrlMarkup(org.workspaceKey, key)).status).toBe(200);

    const folder = await send('POST', '/items', {
      key: org.workspaceKey,
      idempotencyKey: key,
      json: { parentFolderId: await rootFolderOf(org.workspaceKey), name: 'Elsewhere' },
    });

    expectProblem(folder, 422);
  });

  it('refuses an Idempotency-Key that is empty, longer than 255 characters or not printable ASCII with 400', async () => {
    const org = await makeOrganization();

    for (const bad of ['', 'x'.repeat(256), 'tab\there']) {
      const response = await createUrlMarkup(org.workspaceKey, bad);
      expectProblem(response, 400, '/headers/idempotency-key');
    }
    expect((await createUrlMarkup(org.workspaceKey, 'k'.repeat(255))).status).toBe(200);
    expect((await createUrlMarkup(org.workspaceKey, ' !"#$%&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~')).status).toBe(200);
    expect((await send('GET', '/workspace', { key: org.workspaceKey, idempotencyKey: 'tab\there' })).status).toBe(200);
    expect(await usedThisMonth(org.workspaceKey)).toBe(2);
  });

  it('keeps no error: after a 402 the same key and body run again once the plan allows it, and are charged once', async () => {
    const org = await makeOrganization();
    const key = `after-error-${randomUUID()}`;
    await setPlan(org.organizationId, { markupLimit: 0, bundleBalance: 0 });

    const refused = await createUrlMarkup(org.workspaceKey, key);
    await setPlan(org.organizationId, { markupLimit: 50 });
    const retried = await createUrlMarkup(org.workspaceKey, key);
    const again = await createUrlMarkup(org.workspaceKey, key);

    expectProblem(refused, 402);
    expect(replayed(refused)).toBe(false);
    expect(retried.status).toBe(200);
    expect(replayed(retried)).toBe(false);
    expect(again.status).toBe(200);
    expect(replayed(again)).toBe(true);
    expect(again.body).toEqual(retried.body);
    expect(await markupIds(org.workspaceKey)).toEqual([retried.body.data.id]);
    expect(await usedThisMonth(org.workspaceKey)).toBe(1);
  });

  it('covers every route the route tables mark idempotent, and each replays its first response to the same key', async () => {
    const marked = allRoutes()
      .filter((route) => route.idempotent)
      .map(routeKey)
      .sort();
    expect(Object.keys(ROUTE_CASES).sort()).toEqual(marked);
    const org = await makeOrganization();

    for (const [route, makeCase] of Object.entries(ROUTE_CASES)) {
      const { path, key = org.workspaceKey, ...request } = await makeCase(org);
      const idempotencyKey = `route-${randomUUID()}`;

      const first = await send('POST', path, { key, idempotencyKey, ...request });
      const second = await send('POST', path, { key, idempotencyKey, ...request });

      expect(first.status, `${route}: ${JSON.stringify(first.body)}`).toBeGreaterThanOrEqual(200);
      expect(first.status, route).toBeLessThan(300);
      expect(replayed(first), route).toBe(false);
      expect(second.status, route).toBe(first.status);
      expect(replayed(second), route).toBe(true);
      expect(second.body, route).toEqual(first.body);
    }
  }, 90_000);
});

describe('Idempotency records (shared/db/idempotency.ts, shared/http/idempotency.ts)', () => {
  const principalOf = (org: Org): Principal => ({
    kind: 'apiKey',
    scope: 'organization',
    keyId: `test-${randomUUID()}`,
    organizationId: org.organizationId,
    userId: randomUUID(),
    actsAsMember: false,
  });
  const request = (principal: Principal, key: string) => ({
    principal,
    key,
    fingerprint: 'same-request',
    routeKey: 'POST /test',
    requestId: randomUUID(),
    remainingMs: 30_000,
  });
  const created = (id: string) => async () => ({ status: 201, body: { data: { id } } });

  it('releases the key when the operation throws, so a retry runs the operation', async () => {
    const principal = principalOf(await makeOrganization());
    const key = randomUUID();

    const failed = runIdempotently(request(principal, key), async () => {
      throw new Error('the operation failed');
    });
    await expect(failed).rejects.toThrow('the operation failed');
    const retried = await runIdempotently(request(principal, key), created('after-failure'));
    const replay = await runIdempotently(request(principal, key), created('never'));

    expect(retried).toEqual({ status: 201, body: { data: { id: 'after-failure' } } });
    expect(replay).toEqual({ status: 201, body: { data: { id: 'after-failure' } }, headers: { 'Idempotent-Replayed': 'true' } });
  });

  it("answers 409 while a live holder runs, and lets a retry take over once a dead holder's lock expired", async () => {
    const principal = principalOf(await makeOrganization());
    const live = randomUUID();
    const dead = randomUUID();
    const now = Date.now();
    const held = (lockedUntil: number) => ({
      routeKey: 'POST /test',
      fingerprint: 'same-request',
      token: randomUUID(),
      lockedUntil,
      expiresAtEpoch: Math.floor(now / 1000) + 3600,
    });
    await claimIdempotencyKey(idempotencyScope(principal), live, held(now + 60_000), now);
    await claimIdempotencyKey(idempotencyScope(principal), dead, held(now - 1), now);

    const whileLive = await runIdempotently(request(principal, live), created('blocked')).catch((error: unknown) => error);
    const afterDeath = await runIdempotently(request(principal, dead), created('taken-over'));

    expect(whileLive).toMatchObject({ status: 409, slug: 'idempotent-request-in-progress', retryAfterSeconds: 1 });
    expect(problemHeaders(whileLive as ServiceError)).toEqual({ 'Retry-After': '1' });
    expect(afterDeath.body).toEqual({ data: { id: 'taken-over' } });
  });
});
