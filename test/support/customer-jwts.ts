import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import { call, type Org } from './api.js';
import { createInstallation } from './installations.js';

/** A customer's RSA key pair: the public half goes into the installation, the private half signs JWTs. */
export interface CustomerKeys {
  publicKeyPem: string;
  privateKey: KeyObject;
}

export function makeCustomerKeys(bits = 2048): CustomerKeys {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return { publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), privateKey };
}

/** An installation with the customer's key, and what GET /auth/config answers for it. */
export async function makeInstallation(org: Org, keys: CustomerKeys, extra: Record<string, unknown> = {}) {
  const installation = await createInstallation(org.workspaceKey, { signingKey: keys.publicKeyPem, ...extra });
  const config = await call('GET', '/auth/config', { query: { publicKey: installation.publicKey } });
  if (config.status !== 200) throw new Error(`GET /auth/config answered ${config.status}`);
  return { installation, config: config.body.data as { installationId: string; expectedAud: string; expectedIss: string } };
}

/**
 * A customer JWT as a customer server signs one: RS256, iss/aud from the config, `sub`, issued now
 * (`iat`, which the exchange requires) with 5 minutes of life. `claims` add or replace claims (an
 * `iat` among them is kept); `issuedAt: null` leaves `iat` out and `expiresIn: null` leaves `exp`
 * out; a number for either is the claim itself (seconds since the epoch).
 */
export function customerJwt(
  keys: CustomerKeys,
  config: { expectedAud: string; expectedIss: string },
  claims: JWTPayload = {},
  options: { alg?: string; expiresIn?: string | number | null; issuedAt?: number | null } = {},
): Promise<string> {
  const jwt = new SignJWT({ sub: `customer-user-${Math.random().toString(36).slice(2, 10)}`, ...claims })
    .setProtectedHeader({ alg: options.alg ?? 'RS256' })
    .setIssuer(config.expectedIss)
    .setAudience(config.expectedAud);
  if (claims.iat === undefined && options.issuedAt !== null) jwt.setIssuedAt(options.issuedAt);
  if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? '5m');
  return jwt.sign(keys.privateKey);
}

/** POST /auth/exchange with a customer JWT. */
export const exchange = (token: string) => call('POST', '/auth/exchange', { body: { token } });
