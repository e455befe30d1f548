import { withLivenessCheck } from '../../auth/liveness.js';
import type { EndUserPrincipal, Principal, SessionPrincipal } from '../../auth/principal.js';
import { isExchangeGrantAlive } from '../../db/exchange-grants.js';
import { isApiKeyLive, type StoredPrincipal } from '../../db/live.js';
import { isSessionRevoked } from '../../db/sign-in.js';

/**
 * What a live ticket, connection and subscription record of the caller: its principal as
 * authenticated, without the request's own state (the liveness answer, the route's permission).
 */
export function storedPrincipalOf(principal: Principal): StoredPrincipal {
  const { live: _live, authorization: _authorization, ...rest } = principal as Principal & { live?: unknown };
  return JSON.parse(JSON.stringify(rest)) as StoredPrincipal;
}

/** The principal a stored one stands for, ready for a request's checks (its liveness read anew, like a fresh request's). */
export function principalOf(stored: StoredPrincipal): Principal {
  const principal = { ...stored } as unknown as Principal;
  if (principal.kind === 'endUser') return withLivenessCheck(principal as EndUserPrincipal);
  if (principal.kind === 'session') {
    const answer = sessionAlive(principal);
    answer.catch(() => undefined);
    return { ...principal, live: { answer } };
  }
  return principal;
}

async function sessionAlive(principal: Pick<SessionPrincipal, 'sessionId' | 'expiresAt'>): Promise<boolean> {
  return principal.expiresAt > Date.now() && !(await isSessionRevoked(principal.sessionId));
}

/**
 * Whether the credential a stored principal came from still stands (DESIGN.md "Credentials die with
 * what they stand for"): an API key not revoked, a session not signed out nor expired, an exchange
 * token whose installation and end user still exist. Strongly consistent reads.
 */
export async function credentialAlive(stored: StoredPrincipal): Promise<boolean> {
  const principal = stored as unknown as Principal;
  if (principal.kind === 'apiKey') return isApiKeyLive(principal.keyId);
  if (principal.kind === 'session') return sessionAlive(principal);
  return isExchangeGrantAlive(principal);
}

/** The identity of a credential, so one check serves every connection of it. */
export function credentialKeyOf(stored: StoredPrincipal): string {
  const principal = stored as unknown as Principal;
  if (principal.kind === 'apiKey') return `key:${principal.keyId}`;
  if (principal.kind === 'session') return `session:${principal.sessionId}`;
  return `enduser:${principal.installationId}:${principal.workspaceId}:${principal.externalId}:${principal.userId}`;
}

/** `credentialAlive`, read once per credential for as long as the memo lives (one fan-out batch, one sweep). */
export function credentialChecks(): (stored: StoredPrincipal) => Promise<boolean> {
  const answers = new Map<string, Promise<boolean>>();
  return (stored) => {
    const key = credentialKeyOf(stored);
    let answer = answers.get(key);
    if (!answer) answers.set(key, (answer = credentialAlive(stored)));
    return answer;
  };
}
