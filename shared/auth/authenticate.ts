import { getApiKey, type ApiKeyRecord } from '../db/api-keys.js';
import { getUser } from '../db/users.js';
import { UnauthorizedError } from '../errors.js';
import { parseApiKey, secretMatches } from './api-key-format.js';
import { jwtTypeOf, looksLikeJwt, verifyExchangeToken } from './exchange-tokens.js';
import { withLivenessCheck } from './liveness.js';
import type { KeyPrincipal, Principal, SessionPrincipal } from './principal.js';
import { SESSION_TOKEN_TYPE, verifySessionToken } from './session-tokens.js';
import { isSessionRevoked } from '../db/sign-in.js';

/**
 * Resolves `Authorization: Bearer <credential>` to the caller: an API key, an exchange token or a
 * session token (told apart by format, and the two JWTs by `typ`, DESIGN.md "Credentials"). A
 * session token signed out (`POST /auth/sign-out`) is a 401 from the sign-out's answer on. Every failure of one kind is the same 401, so a
 * caller cannot tell an unknown key from a revoked one or a wrong secret. An exchange token's
 * liveness (its installation and external user still exist) is read with the request's first read
 * of its markup and waited for before it writes or answers (`liveness.ts`). Whether the caller may
 * use the route at all is the permission table's answer (`authorize`), not this one's.
 */
export async function authenticate(authorization: string | undefined): Promise<Principal> {
  if (!authorization) throw new UnauthorizedError('Missing Authorization header: send Authorization: Bearer <API key or exchange token>.');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new UnauthorizedError('The Authorization header must be: Bearer <API key or exchange token>.');
  const credential = match[1]!;
  if (looksLikeJwt(credential)) {
    if (jwtTypeOf(credential) === SESSION_TOKEN_TYPE) return authenticateSession(credential);
    return withLivenessCheck(await verifyExchangeToken(credential));
  }
  return authenticateApiKey(credential);
}

/**
 * A session token's signature and expiry are checked here; whether it was signed out is read beside
 * the request's own work (one GetItem started now) and waited for before it writes or answers
 * (`requireLive`), so the check adds no round trip of its own to the request's time.
 */
async function authenticateSession(credential: string): Promise<SessionPrincipal> {
  const principal = await verifySessionToken(credential);
  const answer = isSessionRevoked(principal.sessionId).then((revoked) => !revoked);
  // Awaited later (`requireLive`); until then a failed read must not count as an unhandled rejection.
  answer.catch(() => undefined);
  return { ...principal, live: { answer } };
}

async function authenticateApiKey(credential: string): Promise<KeyPrincipal> {
  const parsed = parseApiKey(credential);
  if (!parsed) throw new UnauthorizedError('The credential is not a valid API key or exchange token.');
  const record = await getApiKey(parsed.keyId);
  if (!record || record.revokedAt || !secretMatches(parsed.secret, record.secretHash)) {
    throw new UnauthorizedError('The API key is not valid or has been revoked.');
  }
  const base = { kind: 'apiKey', keyId: record.keyId, organizationId: record.organizationId, userId: record.userId } as const;
  if (record.scope === 'workspace')
    return { ...base, scope: 'workspace', workspaceId: record.workspaceId!, actsAsMember: await actsAsMember(record) };
  return { ...base, scope: 'organization', actsAsMember: false };
}

/**
 * Keys record whether they were made for a member; keys made before they did are told apart by their
 * user. One whose user cannot be found is taken as a member key, so it acts with a membership it does
 * not have (no role) rather than as an owner: an unknown is never a grant.
 */
async function actsAsMember(record: ApiKeyRecord): Promise<boolean> {
  if (record.actsAsMember !== undefined) return record.actsAsMember;
  const user = await getUser(record.userId);
  return user === undefined || user.kind === 'member';
}
