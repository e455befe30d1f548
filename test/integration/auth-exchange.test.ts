import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, makeOrganization, type Org } from '../support/api.js';
import { customerJwt, exchange, makeCustomerKeys, makeInstallation, type CustomerKeys } from '../support/customer-jwts.js';
import { expectProblem } from '../support/problems.js';
import { createThread, makeTypedMarkup, threadBody } from '../support/threads.js';

let org: Org;
let keys: CustomerKeys;
let config: { installationId: string; expectedAud: string; expectedIss: string };
let publicKey: string;

beforeAll(async () => {
  org = await makeOrganization();
  keys = makeCustomerKeys();
  const made = await makeInstallation(org, keys);
  config = made.config;
  publicKey = made.installation.publicKey;
});

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

describe('GET /auth/config: what a customer JWT must carry, without a credential', () => {
  it('answers the installation id, expected aud and iss, the algorithm, the claims (iat required), the longest JWT lifetime and the token lifetime', async () => {
    const response = await call('GET', '/auth/config', { query: { publicKey } });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      installationId: config.installationId,
      expectedAud: `review-board-service:installation:${config.installationId}`,
      expectedIss: publicKey,
      algorithm: 'RS256',
      requiredClaims: ['iss', 'aud', 'sub', 'exp', 'iat'],
      optionalClaims: ['markupRole', 'markupId', 'name', 'email', 'picture', 'nbf'],
      markupRoles: ['project:viewer', 'project:contributor', 'project:owner'],
      clockToleranceSeconds: 30,
      maxTokenLifetimeSeconds: 900,
      exchangeTokenLifetimeSeconds: 300,
    });
  });

  it('answers 404 for an unknown publicKey and 400 without one', async () => {
    expectProblem(await call('GET', '/auth/config', { query: { publicKey: 'pk_unknown' } }), 404);
    expectProblem(await call('GET', '/auth/config'), 400, '/query/publicKey');
  });
});

describe('POST /auth/exchange: a verified customer JWT becomes an exchange token of its end user', () => {
  it('mints a token that creates threads as the end user (guest, named from the claims), contributor by default', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const jwt = await customerJwt(keys, config, {
      sub: 'cust-ada',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      picture: 'https://example.com/ada.png',
    });
    const response = await exchange(jwt);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const answer = response.body.data;
    expect(answer).toEqual({
      exchangeToken: expect.any(String),
      expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      workspaceId: org.workspaceId,
      userId: expect.any(String),
      markupRole: 'project:contributor',
    });
    const lifetime = Date.parse(answer.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(280_000);
    expect(lifetime).toBeLessThanOrEqual(300_000);

    const thread = await createThread(answer.exchangeToken, markup);
    expect(thread.user).toMatchObject({ id: answer.userId, name: 'Ada Lovelace', guest: true });

    const external = await call('GET', '/users/external/cust-ada', { key: org.workspaceKey });
    expect(external.status).toBe(200);
    expect(external.body.data).toMatchObject({
      id: answer.userId,
      externalId: 'cust-ada',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      avatarUrl: 'https://example.com/ada.png',
    });
  });

  it('keeps one external user per sub: a second exchange answers the same userId and refreshes the name', async () => {
    const first = await exchange(await customerJwt(keys, config, { sub: 'cust-grace', name: 'Grace' }));
    const second = await exchange(await customerJwt(keys, config, { sub: 'cust-grace', name: 'Grace Hopper' }));
    expect(second.body.data.userId).toBe(first.body.data.userId);
    const external = await call('GET', '/users/external/cust-grace', { key: org.workspaceKey });
    expect(external.body.data.name).toBe('Grace Hopper');
  });

  it('binds the token to markupId when the claim names one, and echoes it; other markups are 403', async () => {
    const [bound, other] = await Promise.all([makeTypedMarkup(org, 'webpage'), makeTypedMarkup(org, 'webpage')]);
    const response = await exchange(await customerJwt(keys, config, { markupId: bound.id, markupRole: 'project:owner' }));
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ markupId: bound.id, markupRole: 'project:owner' });
    const token = response.body.data.exchangeToken;
    expect((await call('POST', '/threads', { key: token, body: threadBody(bound) })).status).toBe(200);
    expectProblem(await call('POST', '/threads', { key: token, body: threadBody(other) }), 403);
    expectProblem(await call('GET', `/markups/${other.id}`, { key: token }), 403);
  });

  it('gives a viewer token read access and no thread creation', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const token = (await exchange(await customerJwt(keys, config, { markupRole: 'project:viewer' }))).body.data.exchangeToken;
    expect((await call('GET', '/threads', { key: token, query: { markupId: markup.id } })).status).toBe(200);
    expectProblem(await call('POST', '/threads', { key: token, body: threadBody(markup) }), 403);
  });

  it('refuses an exchange token on workspace, installation and user administration', async () => {
    const token = (await exchange(await customerJwt(keys, config, { markupRole: 'project:owner' }))).body.data.exchangeToken;
    for (const [method, path] of [
      ['GET', '/workspace'],
      ['GET', '/markups'],
      ['GET', '/installations'],
      ['GET', `/installations/${config.installationId}`],
      ['GET', '/users/external/cust-ada'],
    ] as const) {
      const response = await call(method, path, { key: token });
      expect([401, 403], `${method} ${path}`).toContain(response.status);
    }
  });
});

describe('POST /auth/exchange refuses every forged, stale or misaddressed customer JWT (the JWT attack table)', () => {
  const sign = (claims: Record<string, unknown>, alg: string, key: Parameters<SignJWT['sign']>[0]) =>
    new SignJWT(claims).setProtectedHeader({ alg }).sign(key);

  it.each([
    ['alg none', async () => new UnsecuredJWT(claimsOf(await customerJwt(keys, config))).encode()],
    [
      'HS256 keyed with the public PEM',
      async () => sign(claimsOf(await customerJwt(keys, config)), 'HS256', new TextEncoder().encode(keys.publicKeyPem)),
    ],
    ['RS512 with the right key', async () => customerJwt(keys, config, {}, { alg: 'RS512' })],
    ['PS256 with the right key', async () => customerJwt(keys, config, {}, { alg: 'PS256' })],
    ['RS256 with another key', async () => customerJwt(makeCustomerKeys(), config)],
    [
      'ES256',
      async () => sign(claimsOf(await customerJwt(keys, config)), 'ES256', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
    ],
    ['expired', async () => customerJwt(keys, config, {}, { expiresIn: Math.floor(Date.now() / 1000) - 120 })],
    ['no exp', async () => customerJwt(keys, config, {}, { expiresIn: null })],
    ['wrong aud', async () => customerJwt(keys, { ...config, expectedAud: `${config.expectedAud}x` })],
    [
      'aud of another installation',
      async () => customerJwt(keys, { ...config, expectedAud: 'review-board-service:installation:00000000-0000-4000-8000-000000000000' }),
    ],
    ['wrong iss', async () => customerJwt(keys, { ...config, expectedIss: 'someone-else' })],
    ['no sub', async () => customerJwt(keys, config, { sub: undefined })],
    ['sub null', async () => customerJwt(keys, config, { sub: null as never })],
    ['sub a number', async () => customerJwt(keys, config, { sub: 42 as never })],
    ['sub empty', async () => customerJwt(keys, config, { sub: '' })],
    ['nbf in the future', async () => customerJwt(keys, config, { nbf: Math.floor(Date.now() / 1000) + 600 })],
    ['iat in the future', async () => customerJwt(keys, config, { iat: Math.floor(Date.now() / 1000) + 600 })],
    ['not a JWT', async () => 'not.a.jwt'],
    [
      'tampered payload',
      async () => {
        const jwt = await customerJwt(keys, config);
        const [header, , signature] = jwt.split('.');
        const payload = Buffer.from(JSON.stringify({ ...claimsOf(jwt), markupRole: 'project:owner' })).toString('base64url');
        return `${header}.${payload}.${signature}`;
      },
    ],
  ])('%s: 401', async (_name, make) => {
    const response = await exchange(await make());
    expectProblem(response, 401);
    expect(JSON.stringify(response.body)).not.toContain('exchangeToken');
  });

  it.each([
    ['nbf in the future', { nbf: 600 }, /not valid yet: its nbf claim is in the future/],
    ['exp not a number', { exp: 'soon' }, /exp claim must be a number of seconds/],
    ['nbf not a number', { nbf: 'later' }, /nbf claim must be a number of seconds/],
  ] as const)('says which claim is wrong and how: %s', async (_name, claims, detail) => {
    const now = Math.floor(Date.now() / 1000);
    const values = Object.fromEntries(
      Object.entries(claims).map(([claim, value]) => [claim, typeof value === 'number' ? now + value : value]),
    );
    const response = await exchange(await customerJwt(keys, config, values as never, 'exp' in claims ? { expiresIn: null } : {}));
    expectProblem(response, 401);
    expect(response.body.detail).toMatch(detail);
  });

  it('accepts a small clock skew on exp and nbf (30 s)', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await exchange(await customerJwt(keys, config, { nbf: now + 10 }))).status).toBe(200);
    expect((await exchange(await customerJwt(keys, config, {}, { expiresIn: now - 10 }))).status).toBe(200);
  });

  it('refuses an exchange token that was altered, on a feedback route (401)', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const token: string = (await exchange(await customerJwt(keys, config, { markupRole: 'project:viewer' }))).body.data.exchangeToken;
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const promoted = Buffer.from(JSON.stringify({ ...claimsOf(token), role: 'project:owner' })).toString('base64url');
    expectProblem(await call('POST', '/threads', { key: `${header}.${promoted}.${signature}`, body: threadBody(markup) }), 401);
    // Another first character, whatever it was (a fixed one would leave 1 token in 64 unchanged).
    const forged = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expectProblem(await call('GET', '/threads', { key: `${header}.${payload}.${forged}`, query: { markupId: markup.id } }), 401);
  });

  it.each([
    ['markupRole a number', { markupRole: 3 }],
    ['markupRole unknown', { markupRole: 'project:admin' }],
    ['markupRole a workspace role', { markupRole: 'owner' }],
    ['markupId a number', { markupId: 42 }],
    ['markupId empty', { markupId: '' }],
  ])('%s: 400', async (_name, claims) => {
    expectProblem(await exchange(await customerJwt(keys, config, claims)), 400);
  });

  it('answers 403 for a markupId of a missing markup, a deleted one, or one of another workspace', async () => {
    const other = await makeOrganization();
    const [foreign, doomed] = await Promise.all([makeTypedMarkup(other, 'webpage'), makeTypedMarkup(org, 'webpage')]);
    expect((await call('DELETE', `/markups/${doomed.id}`, { key: org.workspaceKey })).status).toBe(204);
    for (const markupId of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', 'x'.repeat(500), foreign.id, doomed.id]) {
      expectProblem(await exchange(await customerJwt(keys, config, { markupId })), 403);
    }
  });

  it('stops exchanging once the installation is deleted', async () => {
    const localKeys = makeCustomerKeys();
    const made = await makeInstallation(org, localKeys);
    expect((await exchange(await customerJwt(localKeys, made.config))).status).toBe(200);
    expect((await call('DELETE', `/installations/${made.installation.id}`, { key: org.workspaceKey })).status).toBe(204);
    expectProblem(await exchange(await customerJwt(localKeys, made.config)), 401);
  });

  it('answers 400 for a body without a token', async () => {
    expectProblem(await call('POST', '/auth/exchange', { body: {} }), 400, '/body/token');
    expectProblem(await call('POST', '/auth/exchange', { body: { token: 'x'.repeat(20_000) } }), 400, '/body/token');
  });
});

describe('POST /auth/exchange: a customer JWT lives at most 15 minutes (DESIGN "Trust rules": Customer JWTs)', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const refusedFor = async (jwt: string, reason: RegExp) => {
    const response = await exchange(jwt);
    expectProblem(response, 401);
    expect(response.body.detail).toMatch(reason);
    expect(JSON.stringify(response.body)).not.toContain('exchangeToken');
  };

  it('refuses a JWT without iat, naming the claim', async () => {
    await refusedFor(await customerJwt(keys, config, {}, { issuedAt: null }), /\biat\b.*missing/);
  });

  it('refuses a lifetime (exp - iat) of 901 seconds, naming the limit', async () => {
    const iat = now();
    await refusedFor(await customerJwt(keys, config, {}, { issuedAt: iat, expiresIn: iat + 901 }), /lifetime.*901.*900/);
  });

  it('refuses a JWT that expires in the year 3000, whatever its iat', async () => {
    const year3000 = Date.UTC(3000, 0, 1) / 1000;
    await refusedFor(await customerJwt(keys, config, {}, { expiresIn: year3000 }), /lifetime/);
    await refusedFor(await customerJwt(keys, config, {}, { issuedAt: year3000 - 600, expiresIn: year3000 }), /iat.*future/);
  });

  it('refuses an iat in the future beyond the 30 s clock tolerance, even with a short lifetime', async () => {
    const iat = now() + 120;
    await refusedFor(await customerJwt(keys, config, {}, { issuedAt: iat, expiresIn: iat + 300 }), /iat.*future.*30/);
  });

  it('accepts a lifetime of exactly 900 seconds, and an iat a few seconds ahead of our clock', async () => {
    const iat = now();
    const exactly = await exchange(await customerJwt(keys, config, {}, { issuedAt: iat, expiresIn: iat + 900 }));
    const skewed = await exchange(await customerJwt(keys, config, {}, { issuedAt: iat + 10, expiresIn: iat + 310 }));

    expect(exactly.status, JSON.stringify(exactly.body)).toBe(200);
    expect(skewed.status, JSON.stringify(skewed.body)).toBe(200);
  });
});

describe('an installation of a deleted workspace is gone at once', () => {
  it('answers 404 on /auth/config and 401 on /auth/exchange right after the workspace is deleted', async () => {
    const doomed = await makeOrganization();
    const localKeys = makeCustomerKeys();
    const made = await makeInstallation(doomed, localKeys);
    const jwt = await customerJwt(localKeys, made.config);
    expect((await exchange(jwt)).status).toBe(200);
    expect((await call('DELETE', '/workspace', { key: doomed.workspaceKey })).status).toBe(204);
    expectProblem(await call('GET', '/auth/config', { query: { publicKey: made.installation.publicKey } }), 404);
    expectProblem(await exchange(jwt), 401);
  });
});
