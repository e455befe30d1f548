import { randomBytes } from 'node:crypto';
import { importJWK, SignJWT, type JWTPayload } from 'jose';
import { inject } from 'vitest';
import { call } from './api.js';

/** What the run's identity provider is (`test/support/identity-provider.ts`). */
export const identityProvider = () => inject('identityProvider');

/**
 * An identity-provider access token as the provider would issue one: signed with its RSA key (or
 * its EC key, `key: 'ec'`), its issuer and the audience the stack expects, a `sub`, 5 minutes of
 * life. `claims` add or replace claims; `expiresIn: null` leaves `exp` out.
 */
export async function idpToken(
  claims: JWTPayload = {},
  options: { key?: 'rsa' | 'ec'; expiresIn?: string | number | null; header?: Record<string, unknown> } = {},
): Promise<string> {
  const provider = identityProvider();
  const jwk = provider.keys[options.key ?? 'rsa'];
  const jwt = new SignJWT({ sub: `idp-user-${randomBytes(6).toString('hex')}`, iss: provider.issuer, aud: provider.audience, ...claims })
    .setProtectedHeader({ alg: jwk.alg!, kid: jwk.kid!, ...options.header })
    .setIssuedAt();
  if (options.expiresIn !== null && claims.exp === undefined) jwt.setExpirationTime(options.expiresIn ?? '5m');
  return jwt.sign(await importJWK(jwk, jwk.alg));
}

/** A fresh unguessable `state` nonce, as the SDK makes one. */
export const newState = () => randomBytes(24).toString('base64url');

/** POST /auth/sdk-exchange with `token` as the bearer. */
export const sdkExchange = (token: string | null, body: Record<string, unknown>) =>
  call('POST', '/auth/sdk-exchange', { key: token, body });

/** GET /auth/sdk-exchange/result, from `origin` (no Origin header when null). */
export const sdkResult = (query: { state: string; publicKey: string; markupId: string }, origin: string | null) =>
  call('GET', '/auth/sdk-exchange/result', { query, headers: origin === null ? {} : { Origin: origin } });
