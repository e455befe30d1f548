import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { mintExchangeToken } from '../../shared/auth/exchange-tokens.js';
import { insertSdkSession } from '../../shared/db/sdk-sessions.js';
import { call, makeOrganization, type Org } from '../support/api.js';
import { createInstallation } from '../support/installations.js';
import { expectProblem } from '../support/problems.js';
import { identityProvider, idpToken, newState, sdkExchange, sdkResult } from '../support/sdk.js';
import { makeTypedMarkup, threadBody } from '../support/threads.js';

const ORIGIN = 'https://shop.example.com';

/** An organization with an installation admitting ORIGIN and a webpage markup of its workspace. */
async function setUp(installation: Record<string, unknown> = { allowedOrigins: [ORIGIN] }) {
  const org = await makeOrganization();
  const made = await createInstallation(org.workspaceKey, { workspaceId: org.workspaceId, ...installation });
  const markup = await makeTypedMarkup(org, 'webpage', { url: 'https://shop.example.com/cart' });
  return { org, installation: made, markup, body: { publicKey: made.publicKey, markupId: markup.id, sdkOrigin: ORIGIN } };
}

describe('POST /auth/sdk-exchange: an identity-provider token for an SDK exchange token (spec: SDK exchange)', () => {
  it("answers an exchange token bound to the markup for the provider's user, who becomes a contributing external user", async () => {
    const { org, markup, body } = await setUp();
    const sub = `idp-${randomUUID()}`;
    const response = await sdkExchange(await idpToken({ sub, name: 'Grace Hopper', email: 'grace@example.com' }), body);

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const answer = response.body.data;
    expect(answer).toEqual({
      exchangeToken: expect.any(String),
      expiresAt: expect.any(String),
      workspaceId: org.workspaceId,
      userId: expect.any(String),
      markupRole: 'project:contributor',
      validatedSdkOrigin: ORIGIN,
      name: 'Grace Hopper',
    });
    expect(new Date(answer.expiresAt).toISOString()).toBe(answer.expiresAt);
    const external = await call('GET', `/users/external/${sub}`, { key: org.workspaceKey });
    expect(external.body.data).toMatchObject({ externalId: sub, name: 'Grace Hopper', email: 'grace@example.com' });

    const thread = await call('POST', '/threads', { key: answer.exchangeToken, body: threadBody(markup) });
    expect(thread.status, JSON.stringify(thread.body)).toBe(200);
    expect(thread.body.data.user).toMatchObject({ id: answer.userId, guest: true, name: 'Grace Hopper' });
    const other = await makeTypedMarkup(org, 'webpage', { url: 'https://shop.example.com/' });
    expectProblem(await call('POST', '/threads', { key: answer.exchangeToken, body: threadBody(other) }), 403);
  });

  it('accepts ES256 tokens of the provider as well as RS256', async () => {
    const { body } = await setUp();
    const response = await sdkExchange(await idpToken({}, { key: 'ec' }), body);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  });

  it("admits, without allowedOrigins, only the origin of the installation's url; with neither, no origin", async () => {
    const withUrl = await setUp({ url: 'https://blog.example.org/posts/1', name: 'Blog' });
    expect((await sdkExchange(await idpToken(), { ...withUrl.body, sdkOrigin: 'https://blog.example.org' })).status).toBe(200);
    expectProblem(await sdkExchange(await idpToken(), withUrl.body), 403);
    const bare = await setUp({});
    expectProblem(await sdkExchange(await idpToken(), { ...bare.body, sdkOrigin: 'https://shop.example.com' }), 403);
  });

  it("refuses an origin the installation does not list, and a markup that is not its workspace's (403)", async () => {
    const { body } = await setUp();
    const refused = await sdkExchange(await idpToken(), { ...body, sdkOrigin: 'https://evil.example.com' });
    expectProblem(refused, 403);
    expect(refused.body.type).toMatch(/origin-not-allowed$/);
    const stranger = await makeOrganization();
    const foreign = await makeTypedMarkup(stranger, 'webpage', { url: 'https://x.example/' });
    expectProblem(await sdkExchange(await idpToken(), { ...body, markupId: foreign.id }), 403);
    expectProblem(await sdkExchange(await idpToken(), { ...body, markupId: randomUUID() }), 403);
  });

  it('answers 404 for a publicKey no installation has', async () => {
    const { body } = await setUp();
    expectProblem(await sdkExchange(await idpToken(), { ...body, publicKey: 'pk_nobody' }), 404);
  });

  it('answers 400 naming the field for bad input', async () => {
    const { body } = await setUp();
    const token = await idpToken();
    expectProblem(await sdkExchange(token, { ...body, sdkOrigin: 'https://shop.example.com/' }), 400, '/body/sdkOrigin');
    expectProblem(await sdkExchange(token, { ...body, sdkOrigin: 'shop.example.com' }), 400, '/body/sdkOrigin');
    expectProblem(await sdkExchange(token, { ...body, markupId: 'not-a-uuid' }), 400, '/body/markupId');
    expectProblem(await sdkExchange(token, { ...body, state: 'short' }), 400, '/body/state');
    expectProblem(await sdkExchange(token, { ...body, state: 'x'.repeat(257) }), 400, '/body/state');
    expectProblem(await sdkExchange(token, { ...body, state: 'has spaces in it, sixteen+' }), 400, '/body/state');
    expectProblem(await sdkExchange(token, { markupId: body.markupId, sdkOrigin: ORIGIN }), 400, '/body/publicKey');
  });

  describe('refuses every token but a valid one of the provider (401), writing nothing', () => {
    const provider = () => identityProvider();
    const otherRsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const unsigned = (claims: Record<string, unknown>) => {
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
    };
    const base = () => ({
      sub: `idp-${randomUUID()}`,
      iss: provider().issuer,
      aud: provider().audience,
      exp: Math.floor(Date.now() / 1000) + 300,
    });
    const attacks: [string, (org: Org) => Promise<string | null>][] = [
      ['no Authorization header', async () => null],
      ['alg none', async () => unsigned(base())],
      [
        "HS256 keyed with the RSA key's public modulus",
        async () =>
          new SignJWT(base())
            .setProtectedHeader({ alg: 'HS256', kid: provider().keys.rsa.kid! })
            .sign(Buffer.from(provider().keys.rsa.n!, 'base64url')),
      ],
      ["RS512 with the provider's key", async () => idpToken({}, { header: { alg: 'RS512' } }).catch(() => 'unsignable')],
      [
        "another RSA key under the provider's kid",
        async () => new SignJWT(base()).setProtectedHeader({ alg: 'RS256', kid: provider().keys.rsa.kid! }).sign(otherRsa),
      ],
      [
        'a kid the provider does not publish',
        async () => new SignJWT(base()).setProtectedHeader({ alg: 'RS256', kid: 'unknown-kid' }).sign(otherRsa),
      ],
      ['an expired token', async () => idpToken({ exp: Math.floor(Date.now() / 1000) - 3600 })],
      ['a token without exp', async () => idpToken({}, { expiresIn: null })],
      ['another audience', async () => idpToken({ aud: 'someone-else' })],
      ['another issuer', async () => idpToken({ iss: 'https://other-idp.example/' })],
      ['a token without sub', async () => idpToken({ sub: undefined })],
      [
        'an exchange token of ours',
        async (org) =>
          (
            await mintExchangeToken({
              organizationId: org.organizationId,
              workspaceId: org.workspaceId,
              userId: randomUUID(),
              externalId: 'x',
              installationId: randomUUID(),
              markupRole: 'project:owner',
            })
          ).token,
      ],
      ['an API key', async (org) => org.workspaceKey],
      [
        'a token altered after signing',
        async () => {
          const [header, , signature] = (await idpToken()).split('.');
          return `${header}.${Buffer.from(JSON.stringify({ ...base(), sub: 'someone-else' })).toString('base64url')}.${signature}`;
        },
      ],
    ];
    it.each(attacks)('%s', async (_label, make) => {
      const { org, body } = await setUp();
      const state = newState();
      const response = await sdkExchange(await make(org), { ...body, state });
      expectProblem(response, 401);
      expectProblem(await sdkResult({ state, publicKey: body.publicKey, markupId: body.markupId }, ORIGIN), 404);
    });
  });
});

describe('GET /auth/sdk-exchange/result: the recorded answer, once, to the recorded origin only', () => {
  it('delivers the answer recorded under state once, to the sdkOrigin, for the same publicKey and markupId', async () => {
    const { body } = await setUp();
    const state = newState();
    const exchanged = await sdkExchange(await idpToken({ name: 'Ada' }), { ...body, state });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    const query = { state, publicKey: body.publicKey, markupId: body.markupId };

    expectProblem(await sdkResult(query, 'https://evil.example.com'), 404);
    expectProblem(await sdkResult({ ...query, markupId: randomUUID() }, ORIGIN), 404);
    expectProblem(await sdkResult({ ...query, publicKey: `${body.publicKey}x` }, ORIGIN), 404);
    expectProblem(await sdkResult({ ...query, state: newState() }, ORIGIN), 404);
    expectProblem(await sdkResult(query, null), 403);

    const delivered = await sdkResult(query, ORIGIN);
    expect(delivered.status, JSON.stringify(delivered.body)).toBe(200);
    expect(delivered.body.data).toEqual(exchanged.body.data);
    const replayed = await sdkResult(query, ORIGIN);
    expectProblem(replayed, 404);
    expect(replayed.body.detail).toBe((await sdkResult({ ...query, state: newState() }, ORIGIN)).body.detail);
  });

  it('refuses a state used before (409) and keeps the first answer waiting', async () => {
    const { body } = await setUp();
    const state = newState();
    const first = await sdkExchange(await idpToken(), { ...body, state });
    expect(first.status).toBe(200);
    expectProblem(await sdkExchange(await idpToken(), { ...body, state }), 409);
    const delivered = await sdkResult({ state, publicKey: body.publicKey, markupId: body.markupId }, ORIGIN);
    expect(delivered.body.data.userId).toBe(first.body.data.userId);
  });

  it('refuses a state again after its answer was delivered (409), so a used nonce never carries a second session', async () => {
    const { body } = await setUp();
    const state = newState();
    const query = { state, publicKey: body.publicKey, markupId: body.markupId };
    const first = await sdkExchange(await idpToken({ name: 'Ada' }), { ...body, state });
    expect(first.status).toBe(200);
    expect((await sdkResult(query, ORIGIN)).status).toBe(200);

    expectProblem(await sdkExchange(await idpToken({ name: 'Mallory' }), { ...body, state }), 409);
    expectProblem(await sdkResult(query, ORIGIN), 404);
  });

  it('delivers nothing once the session expired', async () => {
    const { body } = await setUp();
    const state = newState();
    const answer = {
      exchangeToken: 'x',
      expiresAt: new Date().toISOString(),
      workspaceId: 'w',
      userId: 'u',
      markupRole: 'project:contributor',
      validatedSdkOrigin: ORIGIN,
      name: 'n',
    };
    await insertSdkSession(state, {
      publicKey: body.publicKey,
      markupId: body.markupId,
      sdkOrigin: ORIGIN,
      expiresAt: Date.now() - 1,
      answer,
    });
    expectProblem(await sdkResult({ state, publicKey: body.publicKey, markupId: body.markupId }, ORIGIN), 404);
  });

  it('answers 400 naming the parameter for a malformed state or markupId', async () => {
    const { body } = await setUp();
    expectProblem(await sdkResult({ state: 'short', publicKey: body.publicKey, markupId: body.markupId }, ORIGIN), 400, '/query/state');
    expectProblem(await sdkResult({ state: newState(), publicKey: body.publicKey, markupId: 'nope' }, ORIGIN), 400, '/query/markupId');
  });

  it('gives the answer to exactly one of two parallel callers (20 runs)', async () => {
    const { body } = await setUp();
    const started = performance.now();
    for (let run = 0; run < 20; run++) {
      const state = newState();
      expect((await sdkExchange(await idpToken(), { ...body, state })).status).toBe(200);
      const query = { state, publicKey: body.publicKey, markupId: body.markupId };
      const statuses = (await Promise.all([sdkResult(query, ORIGIN), sdkResult(query, ORIGIN)])).map((response) => response.status);
      expect(statuses.sort(), `run ${run}`).toEqual([200, 404]);
    }
    console.log(`sdk result race: 20 runs of 2 parallel collections in ${Math.round(performance.now() - started)} ms`);
  });
});
