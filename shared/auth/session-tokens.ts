import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { UnauthorizedError } from '../errors.js';
import { getExchangeSigner, getExchangeVerificationKey, type ExchangeVerificationKey } from './exchange-keys.js';
import type { ExchangeTokenSigner } from './exchange-signers.js';
import { signServiceJwt, verifyServiceJwt } from './exchange-tokens.js';
import type { SessionPrincipal } from './principal.js';

/**
 * Session tokens of the review app (DESIGN.md "The review app"): the third credential kind, beside
 * API keys and exchange tokens. JWTs signed like exchange tokens (ES256 under the service's key,
 * `exchange-keys.ts`: only the auth function signs, every function verifies with the public key),
 * told apart from them by `typ` and audience, so neither passes for the other. They name the
 * member's user only: the role is read per workspace from the membership, so a role change or a
 * removal holds on the next request. `POST /auth/sign-out` revokes one (`shared/db/sign-in.ts`).
 */

export const SESSION_TOKEN_TYPE = 'rbs-session+jwt';
const AUDIENCE = 'review-board-service:session';
/** 12 hours: a working day, then sign in again. */
export const SESSION_TOKEN_TTL_SECONDS = 12 * 60 * 60;

const Claims = v.object({ sub: v.pipe(v.string(), v.minLength(1)), jti: v.pipe(v.string(), v.minLength(1)), exp: v.number() });

const invalid = () => new UnauthorizedError('The session token is not valid or has expired; sign in again (POST /auth/email-sign-in).');

/** Signs a session token for `userId` with `signer`; answers it, its id and its expiry. */
export async function signSessionToken(
  signer: ExchangeTokenSigner,
  userId: string,
  now = Date.now(),
): Promise<{ token: string; sessionId: string; expiresAt: Date }> {
  const issuedAt = Math.floor(now / 1000);
  const expiresAt = issuedAt + SESSION_TOKEN_TTL_SECONDS;
  const sessionId = randomUUID();
  const token = await signServiceJwt(signer, SESSION_TOKEN_TYPE, {
    iss: 'review-board-service',
    aud: AUDIENCE,
    sub: userId,
    iat: issuedAt,
    exp: expiresAt,
    jti: sessionId,
  });
  return { token, sessionId, expiresAt: new Date(expiresAt * 1000) };
}

/** Mints a session token with the process's signer (the auth function). */
export async function mintSessionToken(userId: string, now = Date.now()): Promise<{ token: string; sessionId: string; expiresAt: Date }> {
  return signSessionToken(await getExchangeSigner(), userId, now);
}

/** The member a session token speaks for; every failure is the same 401. Revocation is checked by `authenticate`. */
export async function verifySessionToken(token: string): Promise<SessionPrincipal> {
  return checkSessionToken(token, await getExchangeVerificationKey());
}

export async function checkSessionToken(token: string, expected: ExchangeVerificationKey): Promise<SessionPrincipal> {
  const payload = await verifyServiceJwt(token, expected, { typ: SESSION_TOKEN_TYPE, audience: AUDIENCE, invalid });
  const claims = v.safeParse(Claims, payload);
  if (!claims.success) throw invalid();
  return {
    kind: 'session',
    scope: 'member',
    userId: claims.output.sub,
    sessionId: claims.output.jti,
    expiresAt: claims.output.exp * 1000,
    actsAsMember: true,
  };
}
