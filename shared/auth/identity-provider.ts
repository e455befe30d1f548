import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { getConfig } from '../config.js';
import { logger } from '../logger.js';
import { ServiceUnavailableError, UnauthorizedError } from '../errors.js';
import { EXCHANGE_TOKEN_TYPE } from './exchange-tokens.js';

/**
 * Identity-provider access tokens for `POST /auth/sdk-exchange` (DESIGN.md "SDK exchange"):
 * verified against the provider's JWK set at `IDP_JWKS_URL`, with `IDP_ISSUER` and `IDP_AUDIENCE`.
 * The key set is fetched by jose and kept per process (re-fetched at most every 30 s for a `kid` it
 * does not know, and every 10 minutes otherwise), so a request costs no network call in the usual case.
 */

/** The only signature algorithms an identity-provider token may use. */
export const IDP_ALGORITHMS = ['RS256', 'ES256'] as const;
/** Clock skew tolerated on `exp` and `nbf` between the provider's clock and ours. */
export const IDP_CLOCK_TOLERANCE_SECONDS = 30;

let keySet: { url: string; jwks: ReturnType<typeof createRemoteJWKSet> } | undefined;

function jwksOf(url: string): ReturnType<typeof createRemoteJWKSet> {
  if (keySet?.url !== url) {
    keySet = { url, jwks: createRemoteJWKSet(new URL(url), { timeoutDuration: 5_000, cooldownDuration: 30_000, cacheMaxAge: 600_000 }) };
  }
  return keySet.jwks;
}

/** What the SDK exchange takes from a verified token: the end user and the profile claims present. */
export interface IdentityProviderUser {
  sub: string;
  name?: string;
  email?: string;
  picture?: string;
}

const refused = (detail: string) => new UnauthorizedError(`The identity-provider token was refused: ${detail}`);

/**
 * The end user a bearer identity-provider token speaks for. 503 when this deployment has no
 * identity provider, or its key set cannot be fetched; 401 for anything about the token itself,
 * an exchange token of ours included (spec, SDK exchange rule 1: one cannot mint another).
 */
export async function verifyIdentityProviderToken(authorization: string | undefined): Promise<IdentityProviderUser> {
  const provider = getConfig().identityProvider;
  if (!provider) {
    throw new ServiceUnavailableError(
      'No identity provider is configured for this deployment (IDP_JWKS_URL, IDP_ISSUER, IDP_AUDIENCE), so the SDK exchange is unavailable.',
      'identity-provider-not-configured',
    );
  }
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (!token) throw new UnauthorizedError("Send the identity provider's access token as Authorization: Bearer <token>.");
  let type: string | undefined;
  try {
    type = decodeProtectedHeader(token).typ;
  } catch {
    throw refused('it is not a JWT.');
  }
  if (type === EXCHANGE_TOKEN_TYPE) throw refused('it is an exchange token; only an identity-provider access token can be exchanged.');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, jwksOf(provider.jwksUrl), {
      algorithms: [...IDP_ALGORITHMS],
      issuer: provider.issuer,
      audience: provider.audience,
      requiredClaims: ['sub', 'exp'],
      clockTolerance: IDP_CLOCK_TOLERANCE_SECONDS,
    }));
  } catch (error) {
    throw reasonOf(error);
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') throw refused('its sub claim is missing.');
  return { sub: payload.sub, ...profileOf(payload) };
}

function reasonOf(error: unknown): Error {
  const code = (error as { code?: string }).code;
  if (code === undefined || code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JWKS_INVALID' || code === 'ERR_JOSE_GENERIC') {
    // No answer, or not a key set, from the provider: not the caller's fault.
    logger.warn('identity provider key set unavailable', { error });
    return new ServiceUnavailableError(
      "The identity provider's key set could not be fetched; try again shortly.",
      'identity-provider-unavailable',
    );
  }
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return refused('it has expired (exp).');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return refused(`its ${(error as { claim?: string }).claim ?? ''} claim is missing or not the one expected.`);
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return refused(`it must be signed with ${IDP_ALGORITHMS.join(' or ')}.`);
    default:
      return refused("its signature does not verify with the identity provider's keys.");
  }
}

/** The profile claims that are strings; the external-user upsert keeps only those its fields accept. */
function profileOf(payload: JWTPayload): Omit<IdentityProviderUser, 'sub'> {
  const profile = { name: payload.name, email: payload.email, picture: payload.picture };
  return Object.fromEntries(Object.entries(profile).filter(([, value]) => typeof value === 'string'));
}
