import { getConfig } from '../config.js';
import { readExchangeGrantRecords } from '../db/exchange-grants.js';
import { UnauthorizedError } from '../http/errors.js';
import type { EndUserPrincipal, Principal } from './principal.js';

/**
 * Exchange tokens die with what they stand for (DESIGN.md "Credentials die with what they stand
 * for"): a token of a deleted installation or a deleted external user (or one deleted and made
 * again: a new userId) is refused with 401 on its next request, not when it expires.
 *
 * The check costs one read per request and no time: `authenticate` starts it (one consistent
 * BatchGetItem of the installation and the external user, `readExchangeGrantRecords`) and the
 * request goes on with its own reads meanwhile; `authorize` waits for it before the operation may
 * write or answer, and the api-handler waits for it before any answer at all, so a dead token
 * gets the same 401 whatever its request (a 404, a validation error or an idempotent replay
 * included). Nothing is cached: a warm process sees a delete on the very next request.
 */

const dead = () => new UnauthorizedError('The exchange token is no longer valid: its installation or end user was deleted. Exchange a new one with POST /auth/exchange.');

/** How `authenticate` checks liveness: `parallel` in production; the bench alone switches it. */
export type LivenessMode = 'parallel' | 'sequential' | 'off';
let mode: LivenessMode = 'parallel';

/**
 * The bench's seam: measures a request with the check switched off (`off`) or awaited before the
 * request goes on (`sequential`) beside the production check. Refused outside the local stack, so
 * no deployed function can run without the check.
 */
export function setLivenessModeForBench(next: LivenessMode): void {
  if (getConfig().mode !== 'local') throw new Error('The liveness check can be switched only on the local stack (bench).');
  mode = next;
}

async function isLive(principal: EndUserPrincipal): Promise<boolean> {
  const records = await readExchangeGrantRecords(principal);
  return records.installationWorkspaceId === principal.workspaceId && records.externalUserId === principal.userId;
}

/**
 * The end user of a verified exchange token with its liveness check under way (awaited at once in
 * `sequential` mode). A read that fails is not a pass: it fails the request where it is awaited.
 */
export async function withLivenessCheck(principal: EndUserPrincipal): Promise<EndUserPrincipal> {
  if (mode === 'off') return { ...principal, live: Promise.resolve(true) };
  const live = isLive(principal);
  // Awaited later (`requireLive`); until then a failed read must not count as an unhandled rejection.
  live.catch(() => undefined);
  if (mode === 'sequential') await live;
  return { ...principal, live };
}

/**
 * 401 when the caller is an end user whose token no longer stands for anything (or whose liveness
 * was never checked: fail closed); nothing for API keys.
 */
export async function requireLive(principal: Principal | undefined): Promise<void> {
  if (principal?.kind !== 'endUser') return;
  if (principal.live === undefined || !(await principal.live)) throw dead();
}

/**
 * Runs the rest of a request and answers what it answered, unless the caller's exchange token is
 * dead: then 401, whether the request succeeded or failed.
 */
export async function answerWhileLive<T>(principal: Principal | undefined, work: () => Promise<T>): Promise<T> {
  let answer: T;
  try {
    answer = await work();
  } catch (error) {
    await requireLive(principal);
    throw error;
  }
  await requireLive(principal);
  return answer;
}
