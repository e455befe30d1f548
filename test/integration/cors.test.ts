import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { isOriginListed } from '../../shared/db/allowed-origins.js';
import { call, makeOrganization } from '../support/api.js';
import { createInstallation } from '../support/installations.js';
import { eventually } from '../support/polling.js';

/** An origin no other test (nor earlier run of this file) uses, so no process cache knows it yet. */
const freshOrigin = () => `https://app-${randomUUID().slice(0, 8)}.example.com`;

/** A preflight as a browser sends it before a cross-origin call with Authorization and JSON. */
async function preflight(path: string, origin: string, method: string) {
  const { stack } = inject('localStack');
  return fetch(new URL(`/api/v2${path}`, stack.baseUrl), {
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': method,
      'Access-Control-Request-Headers': 'authorization,content-type,service-api-version',
    },
  });
}

const corsHeadersOf = (headers: Headers) => [...headers.keys()].filter((name) => name.startsWith('access-control-'));

async function installationAdmitting(origin: string) {
  const org = await makeOrganization();
  const installation = await createInstallation(org.workspaceKey, { workspaceId: org.workspaceId, allowedOrigins: [origin] });
  return { org, installation };
}

describe('CORS for embedded clients: allowed origins only, never * (issue 11 item 6)', () => {
  it('answers the preflight of an end-user route from an allowed origin, echoing that origin', async () => {
    const origin = freshOrigin();
    await installationAdmitting(origin);
    const response = await preflight('/threads', origin, 'POST');

    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(origin);
    expect(response.headers.get('access-control-allow-methods')?.split(', ')).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(response.headers.get('access-control-allow-headers')).toBe(
      'Authorization, Content-Type, Service-API-Version, Idempotency-Key, If-Match, If-None-Match',
    );
    expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(response.headers.get('vary')).toBe('Origin');
  });

  it('grants the four token-exchange routes and the end-user routes, and nothing an end user may not call', async () => {
    const origin = freshOrigin();
    await installationAdmitting(origin);
    const id = randomUUID();
    const granted: [string, string][] = [
      ['/auth/config', 'GET'],
      ['/auth/exchange', 'POST'],
      ['/auth/sdk-exchange', 'POST'],
      ['/auth/sdk-exchange/result', 'GET'],
      [`/threads/${id}`, 'GET'],
      [`/threads/${id}/messages`, 'POST'],
      [`/messages/${id}`, 'PATCH'],
      [`/markups/${id}`, 'GET'],
      ['/uploads/upload-policy', 'POST'],
      [`/threads/${id}/screenshot`, 'PUT'],
    ];
    const refused: [string, string][] = [
      ['/workspace', 'DELETE'],
      ['/workspaces', 'GET'],
      ['/installations', 'POST'],
      [`/markups/${id}`, 'DELETE'],
      ['/markups', 'GET'],
      ['/users/external', 'POST'],
      ['/items', 'POST'],
      ['/openapi.json', 'GET'],
      ['/nowhere', 'GET'],
    ];
    for (const [path, method] of granted)
      expect((await preflight(path, origin, method)).headers.get('access-control-allow-origin'), `${method} ${path}`).toBe(origin);
    for (const [path, method] of refused)
      expect(corsHeadersOf((await preflight(path, origin, method)).headers), `${method} ${path}`).toEqual([]);
  });

  it('gives an origin no installation lists no CORS header at all, on preflights and on answers', async () => {
    const origin = freshOrigin();
    await installationAdmitting(origin);
    const stranger = freshOrigin();
    const refused = await preflight('/threads', stranger, 'POST');
    expect(refused.status).toBe(204);
    expect(corsHeadersOf(refused.headers)).toEqual([]);
    const answer = await call('GET', '/auth/config', { query: { publicKey: 'pk_unknown' }, headers: { Origin: stranger } });
    expect(corsHeadersOf(answer.headers)).toEqual([]);
    for (const odd of ['null', '*', origin.toUpperCase(), `${origin}/`, `${origin}:443`, origin.replace('https:', 'http:')]) {
      expect(corsHeadersOf((await preflight('/threads', odd, 'POST')).headers), odd).toEqual([]);
    }
  });

  it('stamps answers and problems of browser routes for an allowed origin (the page can read them), never with *', async () => {
    const origin = freshOrigin();
    const { installation } = await installationAdmitting(origin);
    const config = await call('GET', '/auth/config', { query: { publicKey: installation.publicKey }, headers: { Origin: origin } });
    expect(config.status).toBe(200);
    expect(config.headers.get('access-control-allow-origin')).toBe(origin);
    expect(config.headers.get('access-control-expose-headers')).toBe(
      'Service-API-Version, X-Request-Id, Idempotent-Replayed, Retry-After, ETag',
    );
    expect(config.headers.get('vary')).toBe('Origin');
    const unauthorized = await call('GET', `/threads/${randomUUID()}`, { headers: { Origin: origin } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(origin);
    const adminRoute = await call('GET', '/workspaces', { headers: { Origin: origin } });
    expect(corsHeadersOf(adminRoute.headers)).toEqual([]);
  });
});

describe('the origin index follows the installations (shared/db/allowed-origins.ts)', () => {
  it('lists an origin while some installation admits it, and not after the last one is deleted', async () => {
    const origin = freshOrigin();
    const org = await makeOrganization();
    const first = await createInstallation(org.workspaceKey, { workspaceId: org.workspaceId, allowedOrigins: [origin, origin] });
    const second = await createInstallation(org.workspaceKey, { workspaceId: org.workspaceId, allowedOrigins: [origin, freshOrigin()] });
    expect(await isOriginListed(origin)).toBe(true);
    expect((await call('DELETE', `/installations/${first.id}`, { key: org.workspaceKey })).status).toBe(204);
    expect(await isOriginListed(origin)).toBe(true);
    expect((await call('DELETE', `/installations/${second.id}`, { key: org.workspaceKey })).status).toBe(204);
    expect(await isOriginListed(origin)).toBe(false);
    expect((await call('DELETE', `/installations/${second.id}`, { key: org.workspaceKey })).status).toBe(404);
    await createInstallation(org.workspaceKey, { workspaceId: org.workspaceId, allowedOrigins: [origin] });
    expect(await isOriginListed(origin)).toBe(true);
  });

  it('lists the origin of the url of an installation made without allowedOrigins', async () => {
    const host = `blog-${randomUUID().slice(0, 8)}.example.org`;
    const org = await makeOrganization();
    const made = await createInstallation(org.workspaceKey, { workspaceId: org.workspaceId, url: `https://${host}/posts/1` });
    expect(await isOriginListed(`https://${host}`)).toBe(true);
    await call('DELETE', `/installations/${made.id}`, { key: org.workspaceKey });
    expect(await isOriginListed(`https://${host}`)).toBe(false);
  });

  it("stops listing the origins of a deleted workspace's installations", async () => {
    const origin = freshOrigin();
    const org = await makeOrganization();
    await createInstallation(org.workspaceKey, { workspaceId: org.workspaceId, allowedOrigins: [origin] });
    const deleted = await call('DELETE', '/workspace', { key: org.workspaceKey });
    expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
    expect(
      await eventually(
        () => isOriginListed(origin),
        (listed) => !listed,
        30_000,
      ),
    ).toBe(false);
  });
});
