import { getConfig } from '../config.js';
import { isExchangeGrantAlive } from '../db/exchange-grants.js';
import { UnauthorizedError } from '../errors.js';
import type { EndUserPrincipal, Principal } from './principal.js';

/**
 * Exchange tokens die with what they stand for (DESIGN.md "Credentials die with what they stand
 * for"): a token of a deleted installation or a deleted external user (or one deleted and made
 * again: a new userId) is refused with 401 on its next request, not when it expires.
 *
 * The check costs no call of its own on the requests end users make: each reads its markup first
 * (`markupItem` in `markups/access.ts`, also for threads and messages, after their reference), and
 * that read becomes one consistent BatchGetItem of the markup, the installation and the external
 * user (`readWithExchangeGrant`). `authorize` waits for the answer before the operation may write
 * or answer, and reads it itself (one BatchGetItem) when no markup read carried it; the
 * api-handler does the same before any answer at all, so a dead token gets the same 401 whatever
 * its request (a 404, a validation error or an idempotent replay included). Nothing is cached
 * across requests: a warm process sees a delete on the very next request.
 */

const signedOut = () => new UnauthorizedError('The session token was signed out; sign in again (POST /auth/email-sign-in).');

const dead = () =>
  new UnauthorizedError(
    'The exchange token is no longer valid: its installation or end user was deleted. Exchange a new one with POST /auth/exchange.',
  );

/**
 * One request's liveness check, shared by every copy of its principal: the answer once read (or
 * being read).
 */
export interface LivenessCheck {
  answer?: Promise<boolean>;
}

/**
 * How exchange-token requests check liveness: `fold` as deployed (with the markup's read);
 * `parallel` (a read of its own, started at authentication beside the request's reads) and `off`
 * exist for the bench alone, which measures the deployed check against them.
 */
export type LivenessMode = 'fold' | 'parallel' | 'off';
let mode: LivenessMode = 'fold';

/** The bench's seam; refused outside the local stack, so no deployed function can run without the check. */
export function setLivenessModeForBench(next: LivenessMode): void {
  if (getConfig().mode !== 'local') throw new Error('The liveness check can be switched only on the local stack (bench).');
  mode = next;
}

function started(principal: EndUserPrincipal): Promise<boolean> {
  const answer = isExchangeGrantAlive(principal);
  // Awaited later (`requireLive`); until then a failed read must not count as an unhandled rejection.
  answer.catch(() => undefined);
  return answer;
}

/** The end user of a verified exchange token, with its (not yet read) liveness check. */
export function withLivenessCheck(principal: EndUserPrincipal): EndUserPrincipal {
  if (mode === 'off') return { ...principal, live: { answer: Promise.resolve(true) } };
  if (mode === 'parallel') return { ...principal, live: { answer: started(principal) } };
  return { ...principal, live: {} };
}

/**
 * The end user whose liveness a read about to be made may carry (`readWithExchangeGrant`), with
 * where to put the answer; undefined when there is none to carry (an API key, or already read).
 */
export function livenessToCarry(principal: Principal): { grant: EndUserPrincipal; settle: (alive: boolean) => void } | undefined {
  if (principal.kind !== 'endUser' || !principal.live || principal.live.answer) return undefined;
  const check = principal.live;
  return { grant: principal, settle: (alive) => void (check.answer ??= Promise.resolve(alive)) };
}

/**
 * 401 when the caller is an end user whose token no longer stands for anything (or whose liveness
 * was never set up: fail closed), or a session token that was signed out; nothing for API keys. Reads it (one BatchGetItem) when no read of
 * the request carried it.
 */
export async function requireLive(principal: Principal | undefined): Promise<void> {
  if (principal?.kind === 'session') {
    // Started at authentication (`authenticate.ts`); a session without it is refused (fail closed).
    if (!principal.live?.answer || !(await principal.live.answer)) throw signedOut();
    return;
  }
  if (principal?.kind !== 'endUser') return;
  if (!principal.live) throw dead();
  principal.live.answer ??= started(principal);
  if (!(await principal.live.answer)) throw dead();
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
