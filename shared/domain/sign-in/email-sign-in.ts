import { createHash, randomBytes } from 'node:crypto';
import { authorizeSession } from '../../auth/authorize.js';
import { mintSessionToken } from '../../auth/session-tokens.js';
import type { Principal } from '../../auth/principal.js';
import { failIfArmed } from '../../db/core/faults.js';
import { activateMemberItems, ensureMemberCounts, membershipsOf, readMember, verifyUserEmailItem } from '../../db/members.js';
import { countInWindow, hashSignInCode, insertSignInCode, revokeSession, takeSignInCode } from '../../db/sign-in.js';
import { transactUnlessConditionFails } from '../../db/core/transact.js';
import { findUserIdByEmail, getUser, statusOf, type Role } from '../../db/users.js';
import { getWorkspaces } from '../../db/workspaces.js';
import { sendEmail } from '../../email.js';
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from '../../errors.js';
import { logger } from '../../logger.js';

/**
 * Sign-in by email link (DESIGN.md "The review app"; docs/review-app.md). A member or invitee of
 * any workspace asks for a link; the link's code, single use and valid 15 minutes, is exchanged for
 * a session token. The answer to the ask is the same 202 whoever asks, so it tells no one which
 * addresses are members.
 */

/** How long a sign-in link works. */
export const SIGN_IN_CODE_TTL_MS = 15 * 60 * 1000;

/**
 * The rate limits of `POST /auth/email-sign-in`, counted in fixed windows (one conditional-free
 * UpdateItem each per request, so a flood costs one small write per limit and no email):
 * - per address: 5 links per 15 minutes, enough for a typo'd inbox and a retry, too few to flood
 *   one inbox;
 * - per source IP: 30 requests per 15 minutes, room for an office behind one NAT signing in at
 *   the start of a day, too few to spray links at a list of addresses.
 * Unknown addresses count alike, so a 429 says nothing about membership.
 */
export const SIGN_IN_RATE_LIMITS = {
  perAddress: { limit: 5, windowMs: 15 * 60 * 1000 },
  perSourceIp: { limit: 30, windowMs: 15 * 60 * 1000 },
} as const;

/**
 * The least time an accepted ask takes to answer. A member's ask stores a code and calls SES, a
 * stranger's does neither: measured on the local stack that is ~25 ms apart at the median, enough to
 * tell members from strangers. Answering no sooner than this hides the difference while the work
 * fits in it (SES usually answers well within).
 */
export const SIGN_IN_ANSWER_FLOOR_MS = 250;

/** Invitations activated by one sign-in; a person invited to more workspaces gets the rest on the next sign-in. */
export const MAX_MEMBERSHIPS_PER_SIGN_IN = 100;

/** A window's start and the whole seconds from `now` to its end (at least 1: the `Retry-After`). */
export function windowOf(now: number, windowMs: number): { start: number; retryAfterSeconds: number } {
  const start = now - (now % windowMs);
  return { start, retryAfterSeconds: Math.max(1, Math.ceil((start + windowMs - now) / 1000)) };
}

/** The rate-limit subject of an address: its SHA-256, so the table keeps no list of addresses tried. */
export const addressSubject = (email: string) =>
  `signin-email:${createHash('sha256').update(email.toLowerCase(), 'utf8').digest('base64url')}`;
export const sourceIpSubject = (sourceIp: string) => `signin-ip:${sourceIp}`;

/** 429 once either count passed its limit in its window (both are counted on every request). */
async function requireUnderLimits(email: string, sourceIp: string, now: number): Promise<void> {
  const { perAddress, perSourceIp } = SIGN_IN_RATE_LIMITS;
  const ipWindow = windowOf(now, perSourceIp.windowMs);
  const addressWindow = windowOf(now, perAddress.windowMs);
  const [ipCount, addressCount] = await Promise.all([
    countInWindow(sourceIpSubject(sourceIp), ipWindow.start, perSourceIp.windowMs),
    countInWindow(addressSubject(email), addressWindow.start, perAddress.windowMs),
  ]);
  if (ipCount > perSourceIp.limit) {
    throw new TooManyRequestsError(
      `Too many sign-in requests from this network address: at most ${perSourceIp.limit} every ${perSourceIp.windowMs / 60_000} minutes. Try again in ${ipWindow.retryAfterSeconds} s.`,
      ipWindow.retryAfterSeconds,
    );
  }
  if (addressCount > perAddress.limit) {
    throw new TooManyRequestsError(
      `Too many sign-in links asked for this email address: at most ${perAddress.limit} every ${perAddress.windowMs / 60_000} minutes. Use the latest link sent, or try again in ${addressWindow.retryAfterSeconds} s.`,
      addressWindow.retryAfterSeconds,
    );
  }
}

/** The link a sign-in email carries. */
export const signInLink = (appUrl: string, code: string) => `${appUrl}/sign-in?code=${encodeURIComponent(code)}`;

/**
 * POST /auth/email-sign-in. Counts the request against both rate limits (429), then, for a member
 * or invitee of any workspace, stores a new code's hash and emails the link. Answers nothing
 * either way, and no sooner than SIGN_IN_ANSWER_FLOOR_MS: a failed send is logged, not answered, so
 * neither the answer nor (within the floor) its time depends on membership.
 */
export async function requestSignInLink(email: string, sourceIp: string, appUrl: string, now = Date.now()): Promise<void> {
  const address = email.toLowerCase();
  await requireUnderLimits(address, sourceIp, now);
  const started = performance.now();
  await sendLinkToMember(address, appUrl, now);
  const left = SIGN_IN_ANSWER_FLOOR_MS - (performance.now() - started);
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
}

/** The code and email of an accepted ask, for a member or invitee; nothing for anyone else. */
async function sendLinkToMember(address: string, appUrl: string, now: number): Promise<void> {
  const userId = await findUserIdByEmail(address);
  if (userId === undefined) return;
  const [user, memberships] = await Promise.all([getUser(userId), membershipsOf(userId, 1)]);
  if (!user || user.kind !== 'member' || memberships.length === 0) return;
  const code = randomBytes(32).toString('base64url');
  const expiresAt = now + SIGN_IN_CODE_TTL_MS;
  await insertSignInCode(hashSignInCode(code), { userId, email: address, createdAt: now, expiresAt });
  const link = signInLink(appUrl, code);
  try {
    // Tests fail a send here (local stack only): the answer stays 202 and the next ask sends a new link.
    await failIfArmed('before-sign-in-email', address);
    await sendEmail({
      to: address,
      subject: 'Your Review Board sign-in link',
      text: [
        `Hello ${user.name},`,
        '',
        'Open this link to sign in to Review Board:',
        '',
        link,
        '',
        `It works once, for ${SIGN_IN_CODE_TTL_MS / 60_000} minutes. If you did not ask to sign in, ignore this email: nothing happens without the link.`,
      ].join('\n'),
    });
  } catch (error) {
    logger.warn('sign-in email not sent; asking again sends a new link', { userId, error });
  }
}

export interface SignedIn {
  sessionToken: string;
  expiresAt: string;
  user: { id: string; email: string; name: string };
}

const invalidCode = () =>
  new UnauthorizedError(
    'This sign-in code is not valid: it was used already, it expired (a link works for 15 minutes) or it was never issued. Ask for a new link.',
  );

/**
 * POST /auth/email-sign-in/verify. Takes the code (once: a used, expired or unknown one is the same
 * 401), turns the person's invitations into active memberships (they proved the address, which
 * becomes verified) and mints a session token.
 */
export async function verifySignInCode(code: string, now = Date.now()): Promise<SignedIn> {
  const record = await takeSignInCode(hashSignInCode(code), now);
  if (!record) throw invalidCode();
  const user = await getUser(record.userId);
  if (!user || !user.email) throw invalidCode();
  const memberships = await membershipsOf(user.id, MAX_MEMBERSHIPS_PER_SIGN_IN);
  if (memberships.length === 0) {
    throw new ForbiddenError('This address is no longer a member of any workspace, so there is nothing to sign in to.', 'not-a-member');
  }
  if (!user.emailVerified) await transactUnlessConditionFails([verifyUserEmailItem(user.id)]);
  await Promise.all(
    memberships.filter((member) => statusOf(member) === 'invited').map((member) => activateInvitation(member.workspaceId, user.id)),
  );
  const minted = await mintSessionToken(user.id, now);
  return {
    sessionToken: minted.token,
    expiresAt: minted.expiresAt.toISOString(),
    user: { id: user.id, email: user.email, name: user.name },
  };
}

/** An invitee's first sign-in makes them an active member (with the owner counter, for an invited owner). */
async function activateInvitation(workspaceId: string, userId: string): Promise<void> {
  await ensureMemberCounts(workspaceId);
  const member = await readMember(workspaceId, userId);
  if (!member || statusOf(member) !== 'invited') return;
  const failed = await transactUnlessConditionFails(activateMemberItems(member));
  // Changed meanwhile (a role change, a removal): the member stays as that change left it; the next sign-in tries again.
  if (failed !== undefined) logger.warn('invitation not activated at sign-in; it changed meanwhile', { workspaceId, userId });
}

/** A workspace the signed-in member belongs to, with their role there. */
export interface SessionWorkspace {
  id: string;
  organizationId: string;
  name: string;
  rootFolderId: string;
  archiveFolderId: string;
  role: Role;
}

export interface SessionView {
  user: { id: string; email: string; name: string };
  expiresAt: string;
  workspaces: SessionWorkspace[];
}

/**
 * GET /auth/session: who the session token is, and the workspaces where they are an active member
 * (at most MAX_MEMBERSHIPS_PER_SIGN_IN, by name), each with their role, so the review app can offer
 * them. One Query of the member's memberships and one BatchGet of their workspaces. Only a session
 * token (`authorizeSession`: 403 for API keys and exchange tokens).
 */
export async function sessionView(caller: Principal): Promise<SessionView> {
  const principal = await authorizeSession(caller);
  const [user, memberships] = await Promise.all([getUser(principal.userId), membershipsOf(principal.userId, MAX_MEMBERSHIPS_PER_SIGN_IN)]);
  if (!user?.email) throw new UnauthorizedError("The session token's user no longer exists; sign in again (POST /auth/email-sign-in).");
  const active = new Map(memberships.filter((member) => statusOf(member) === 'active').map((member) => [member.workspaceId, member.role]));
  const workspaces = await getWorkspaces([...active.keys()]);
  return {
    user: { id: user.id, email: user.email, name: user.name },
    expiresAt: new Date(principal.expiresAt).toISOString(),
    workspaces: workspaces
      .map((workspace) => ({
        id: workspace.id,
        organizationId: workspace.organizationId,
        name: workspace.name,
        rootFolderId: workspace.rootFolderId,
        archiveFolderId: workspace.archiveFolderId,
        role: active.get(workspace.id)!,
      }))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id)),
  };
}

/**
 * POST /auth/sign-out: the token is refused from now on, until it would have expired. Only a session
 * token (`authorizeSession`, which reads the token's sign-out before this writes its own).
 */
export async function signOut(caller: Principal, at?: number): Promise<void> {
  const principal = await authorizeSession(caller);
  const now = at ?? Date.now();
  await revokeSession(principal.sessionId, Math.max(principal.expiresAt, now + 1000), now);
}
