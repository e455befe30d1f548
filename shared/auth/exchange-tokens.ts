import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import * as v from 'valibot';
import { getConfig } from '../config.js';
import { UnauthorizedError } from '../errors.js';
import { getExchangeSigner, getExchangeVerificationKey, type ExchangeVerificationKey } from './exchange-keys.js';
import type { ExchangeTokenSigner } from './exchange-signers.js';
import { END_USER_ROLE_ORDER } from './permissions.js';
import type { EndUserPrincipal } from './principal.js';
import { recordMetrics } from '../metrics.js';

/**
 * The service's own exchange tokens (DESIGN.md "Exchange tokens"): JWTs it signs with ES256 under a
 * key of its own (`exchange-keys.ts`), naming that key's `kid`. The key is asymmetric so that only
 * the minting function can sign; every function that verifies holds the public key alone (cached,
 * so verification needs no network call). A token carries everything a request needs to act as the
 * end user: workspace, external user, role, bound markup.
 */

const ISSUER = 'review-board-service';
const AUDIENCE = 'review-board-service:exchange-token';
/** The `typ` header of every exchange token, which tells it apart from a token of anyone else. */
export const EXCHANGE_TOKEN_TYPE = 'rbs-exchange+jwt';
const TYPE = EXCHANGE_TOKEN_TYPE;
const ALGORITHM = 'ES256';
/** Clock skew tolerated between the instances that mint and verify. */
const CLOCK_TOLERANCE_SECONDS = 5;

/** What a token says about its holder: the end-user principal it verifies to. */
export type ExchangeGrant = Pick<
  EndUserPrincipal,
  'organizationId' | 'workspaceId' | 'userId' | 'externalId' | 'installationId' | 'markupRole' | 'markupId'
> & {
  /** Minted by the SDK exchange (an identity-provider login) rather than a customer JWT. */
  sdk?: boolean;
};

const Claims = v.object({
  sub: v.pipe(v.string(), v.minLength(1)),
  org: v.pipe(v.string(), v.minLength(1)),
  ws: v.pipe(v.string(), v.minLength(1)),
  ext: v.pipe(v.string(), v.minLength(1)),
  ins: v.pipe(v.string(), v.minLength(1)),
  role: v.picklist(END_USER_ROLE_ORDER),
  mid: v.optional(v.pipe(v.string(), v.minLength(1))),
});

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Signs a token for `grant` with the current key; answers it and its expiry. */
export async function mintExchangeToken(grant: ExchangeGrant, now = Date.now()): Promise<{ token: string; expiresAt: Date }> {
  const minted = await signExchangeToken(await getExchangeSigner(), grant, now);
  recordMetrics({ ExchangeTokensMinted: 1 });
  return minted;
}

/** Signs a token for `grant` with `signer` (ES256, its `kid`); `mintExchangeToken` with the process's signer. */
export async function signExchangeToken(
  signer: ExchangeTokenSigner,
  grant: ExchangeGrant,
  now = Date.now(),
): Promise<{ token: string; expiresAt: Date }> {
  const issuedAt = Math.floor(now / 1000);
  const expiresAt = issuedAt + getConfig().exchangeTokenTtlSeconds;
  const payload = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: grant.userId,
    iat: issuedAt,
    exp: expiresAt,
    jti: randomUUID(),
    org: grant.organizationId,
    ws: grant.workspaceId,
    ext: grant.externalId,
    ins: grant.installationId,
    role: grant.markupRole,
    ...(grant.markupId ? { mid: grant.markupId } : {}),
    ...(grant.sdk ? { sdk: true } : {}),
  };
  return { token: await signServiceJwt(signer, TYPE, payload), expiresAt: new Date(expiresAt * 1000) };
}

/**
 * A JWT of the service's own (ES256 under the exchange-token key, its `kid`, `typ` telling the kinds
 * apart): exchange tokens and session tokens (`session-tokens.ts`). Built by hand rather than with
 * jose's SignJWT: the KMS signer signs outside the process.
 */
export async function signServiceJwt(signer: ExchangeTokenSigner, typ: string, payload: Record<string, unknown>): Promise<string> {
  const signingInput = `${base64url({ alg: ALGORITHM, kid: signer.kid, typ })}.${base64url(payload)}`;
  const signature = await signer.sign(Buffer.from(signingInput));
  return `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
}

/**
 * The payload of a JWT of the service's own, verified against `expected` (its `kid`, ES256, the
 * service as issuer, `audience`, `typ`); `invalid` is thrown for every failure alike. A token
 * naming another `kid` is refused without looking it up.
 */
export async function verifyServiceJwt(
  token: string,
  expected: ExchangeVerificationKey,
  options: { typ: string; audience: string; invalid: () => Error },
): Promise<Record<string, unknown>> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw options.invalid();
  }
  if (kid !== expected.kid) throw options.invalid();
  try {
    const { payload } = await jwtVerify(token, expected.key, {
      algorithms: [ALGORITHM],
      issuer: ISSUER,
      audience: options.audience,
      typ: options.typ,
      requiredClaims: ['exp', 'iat', 'sub'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    });
    return payload as Record<string, unknown>;
  } catch {
    throw options.invalid();
  }
}

/** The `typ` header of a JWT, undefined when it is not one. */
export function jwtTypeOf(token: string): string | undefined {
  try {
    return decodeProtectedHeader(token).typ;
  } catch {
    return undefined;
  }
}

/** Whether a bearer credential has the shape of a JWT (API keys never do; `api-key-format.ts`). */
export function looksLikeJwt(credential: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(credential);
}

const invalid = () => new UnauthorizedError('The exchange token is not valid or has expired; exchange a new one with POST /auth/exchange.');

/**
 * The end user an exchange token speaks for. Every failure (unknown `kid`, another algorithm, a
 * bad signature, expiry, missing claims) is the same 401, so a caller learns nothing from it.
 */
export async function verifyExchangeToken(token: string): Promise<EndUserPrincipal> {
  return checkExchangeToken(token, await getExchangeVerificationKey());
}

/** `verifyExchangeToken` against `expected`: a token naming another `kid` is refused without looking it up. */
export async function checkExchangeToken(token: string, expected: ExchangeVerificationKey): Promise<EndUserPrincipal> {
  const payload = await verifyServiceJwt(token, expected, { typ: TYPE, audience: AUDIENCE, invalid });
  const claims = v.safeParse(Claims, payload);
  if (!claims.success) throw invalid();
  const c = claims.output;
  return {
    kind: 'endUser',
    scope: 'workspace',
    organizationId: c.org,
    workspaceId: c.ws,
    userId: c.sub,
    externalId: c.ext,
    installationId: c.ins,
    markupRole: c.role,
    ...(c.mid ? { markupId: c.mid } : {}),
    actsAsMember: false,
    ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp * 1000 } : {}),
  };
}
