import { afterEach, describe, expect, it } from 'vitest';
import { verifyIdentityProviderToken } from '../../shared/auth/identity-provider.js';
import { resetConfig } from '../../shared/config.js';
import { installationOrigins } from '../../shared/db/allowed-origins.js';
import { opensToBrowsers } from '../../shared/http/cors.js';
import { browserOrigin } from '../../shared/domain/installations/input.js';

describe('opensToBrowsers: the routes embedded clients may call cross-origin', () => {
  it('opens the token-exchange routes and routes whose permission admits end users, nothing else', () => {
    expect(opensToBrowsers({ path: '/api/v2/auth/sdk-exchange/result', auth: 'none' })).toBe(true);
    expect(opensToBrowsers({ path: '/api/v2/threads', auth: 'apiKey', permission: 'thread:create' })).toBe(true);
    expect(opensToBrowsers({ path: '/api/v2/markups/{id}', auth: 'apiKey', permission: 'markup:read' })).toBe(true);
    expect(opensToBrowsers({ path: '/api/v2/markups/{id}', auth: 'apiKey', permission: 'markup:delete' })).toBe(false);
    expect(opensToBrowsers({ path: '/api/v2/openapi.json', auth: 'none' })).toBe(false);
  });
});

describe('browserOrigin: only origins as browsers serialize them are looked up', () => {
  it.each(['https://app.example.com', 'http://127.0.0.1:5173', 'http://[::1]:8080'])('takes %s', (origin) => {
    expect(browserOrigin(origin)).toBe(origin);
  });
  it.each([
    undefined,
    'null',
    '*',
    'https://App.example.com',
    'https://app.example.com/',
    'file://',
    `https://${'a'.repeat(300)}.com`,
    'https://a.com, https://b.com',
  ])('refuses %s', (origin) => expect(browserOrigin(origin)).toBeUndefined());
});

describe('installationOrigins: what an installation admits (spec: allowedOrigins falls back to the SDK exchange defaults)', () => {
  it('is allowedOrigins when given, deduplicated', () => {
    expect(installationOrigins({ allowedOrigins: ['https://a.example', 'https://a.example'], url: 'https://b.example/x' })).toEqual([
      'https://a.example',
    ]);
  });
  it('falls back to the origin of the url, else to no origin at all', () => {
    expect(installationOrigins({ allowedOrigins: null, url: 'https://Blog.example.org:443/posts/1?x' })).toEqual([
      'https://blog.example.org',
    ]);
    expect(installationOrigins({ allowedOrigins: null, url: null })).toEqual([]);
    expect(installationOrigins({ allowedOrigins: null })).toEqual([]);
  });
});

describe('verifyIdentityProviderToken: 503 when the deployment cannot verify at all', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    resetConfig();
  });

  it('answers 503 without an identity provider configured', async () => {
    delete process.env.IDP_JWKS_URL;
    resetConfig();
    await expect(verifyIdentityProviderToken('Bearer a.b.c')).rejects.toMatchObject({
      status: 503,
      slug: 'identity-provider-not-configured',
    });
  });

  it('answers 503 when the key set cannot be fetched, and 401 for an exchange token of ours', async () => {
    Object.assign(process.env, { IDP_JWKS_URL: 'http://127.0.0.1:9/jwks.json', IDP_ISSUER: 'https://idp.example/', IDP_AUDIENCE: 'rbs' });
    resetConfig();
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const token = `${part({ alg: 'RS256', kid: 'k' })}.${part({ sub: 'u', iss: 'https://idp.example/', aud: 'rbs', exp: 9e9 })}.c2ln`;
    await expect(verifyIdentityProviderToken(`Bearer ${token}`)).rejects.toMatchObject({
      status: 503,
      slug: 'identity-provider-unavailable',
    });
    const ours = `${part({ alg: 'HS256', kid: 'k', typ: 'rbs-exchange+jwt' })}.${part({ sub: 'u' })}.c2ln`;
    await expect(verifyIdentityProviderToken(`Bearer ${ours}`)).rejects.toMatchObject({ status: 401 });
  });
});
