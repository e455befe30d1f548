import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { forEachLimit } from '../../concurrency.js';
import { failIfArmed } from '../../db/core/faults.js';
import {
  claimInvitationEmail,
  ensureMemberCounts,
  findMembers,
  findUserIdsByEmails,
  finishInvitationEmail,
  insertInvitations,
  MAX_MEMBERS,
} from '../../db/members.js';
import { fromFreshReads, STALE } from '../../db/core/transact.js';
import { getUser, statusOf, type Member, type Role, type User } from '../../db/users.js';
import { sendEmail } from '../../email.js';
import { ConflictError, ForbiddenError } from '../../errors.js';
import { logger } from '../../logger.js';
import { requireMayAssign } from './members.js';
import { resolveWorkspaceForMember } from '../workspaces/scope.js';

/** At most this many addresses per POST /users/invite (spec: Limits). */
export const MAX_INVITE_EMAILS = 25;
/** Longest personal message an invitation carries. */
export const MAX_INVITE_MESSAGE_LENGTH = 2000;
/** A request that took the lease to send an invitation email and died is replaced after this long. */
const SENDING_LEASE_MS = 60_000;

export interface InviteRequest {
  emails: readonly string[];
  role: Role;
  message?: string;
}

/**
 * `POST /users/invite`: invites into the workspace the caller names (`resolveWorkspaceForMember`).
 * Only a workspace member inviting with a verified email may (a key made for the member, or a
 * session): plain API keys and organization keys are refused (403 `verified-email-required`).
 */
export async function inviteUsers(
  principal: Principal,
  workspaceId: string | undefined,
  request: InviteRequest,
  appUrl: string,
): Promise<void> {
  const { workspace, role } = await resolveWorkspaceForMember(principal, workspaceId);
  if (!principal.actsAsMember) {
    throw new ForbiddenError(
      'Inviting needs a verified email: call with a key made for a workspace member (admin key create --email). Plain API keys and organization keys cannot invite.',
      'verified-email-required',
    );
  }
  await inviteMembers(workspace, { userId: principal.userId, role }, request, appUrl);
}

/** The member inviting: their user and their role in the workspace. */
export interface Inviter {
  userId: string;
  role: Role;
}

interface Invitee {
  userId: string;
  email: string;
}

/**
 * POST /users/invite. Each new address becomes an invited member at once (a User with its unique
 * email claim when the person is new, and a Member record), all of a request in one transaction
 * with the member counter (409 `member-limit` past MAX_MEMBERS); addresses already invited or
 * members change nothing. Then one invitation email per new invitee goes out through SES.
 *
 * Sending is after the commit and may fail: the invitation stays, its record keeps no
 * `invitationSentAt`, and inviting the address again sends it then. A lease on the record
 * (`invitationSendingSince`) makes one request send each email, however many re-invite at once.
 */
export async function inviteMembers(
  workspace: { id: string; name: string },
  inviter: Inviter,
  request: InviteRequest,
  appUrl: string,
): Promise<void> {
  requireMayAssign(inviter.role, undefined, request.role);
  const emails = [...new Set(request.emails.map((email) => email.toLowerCase()))];
  await ensureMemberCounts(workspace.id);
  const { created, unsent } = await fromFreshReads('The workspace members', async () => {
    const now = Date.now();
    const userIds = await findUserIdsByEmails(emails);
    const members = await findMembers(workspace.id, [...userIds.values()]);
    const invitations: { email: string; newUser?: User & { email: string }; member: Member }[] = [];
    const unsentBefore: Invitee[] = [];
    for (const email of emails) {
      const existingId = userIds.get(email);
      const existing = existingId === undefined ? undefined : members.get(existingId);
      if (existingId !== undefined && existing) {
        if (statusOf(existing) === 'invited' && existing.invitationSentAt === undefined) unsentBefore.push({ userId: existingId, email });
        continue;
      }
      const newUser = existingId === undefined ? newInvitedUser(email, now) : undefined;
      const userId = existingId ?? newUser!.id;
      invitations.push({
        email,
        newUser,
        // Created holding the sending lease: this request sends the email it just made due.
        member: {
          workspaceId: workspace.id,
          userId,
          role: request.role,
          createdAt: now,
          status: 'invited',
          invitedBy: inviter.userId,
          invitedAt: now,
          invitationSendingSince: now,
        },
      });
    }
    if (invitations.length === 0) return { created: [], unsent: unsentBefore };
    const result = await insertInvitations(workspace.id, invitations);
    if (result === 'stale') return STALE;
    if (result === 'member-limit') {
      throw new ConflictError(
        `A workspace has at most ${MAX_MEMBERS} members and invitees; this would pass it. Remove some first.`,
        'member-limit',
      );
    }
    return { created: invitations.map(({ email, member }) => ({ userId: member.userId, email })), unsent: unsentBefore };
  });
  if (created.length === 0 && unsent.length === 0) return;
  const claimed = await claimUnsent(workspace.id, unsent);
  const email = await invitationEmail(workspace, inviter, request, appUrl);
  await forEachLimit([...created, ...claimed], 5, (invitee) => sendInvitation(workspace.id, invitee, email));
}

function newInvitedUser(email: string, now: number): User & { email: string } {
  // An invitee's email is not verified: a key made for them (`admin key create --email`) verifies it.
  return {
    id: randomUUID(),
    name: email.split('@')[0] ?? email,
    email,
    emailVerified: false,
    kind: 'member',
    createdAt: now,
    modifiedAt: now,
  };
}

async function claimUnsent(workspaceId: string, unsent: Invitee[]): Promise<Invitee[]> {
  const now = Date.now();
  const claims = await Promise.all(
    unsent.map(async (invitee) => ((await claimInvitationEmail(workspaceId, invitee.userId, now, SENDING_LEASE_MS)) ? [invitee] : [])),
  );
  return claims.flat();
}

interface InvitationEmail {
  subject: string;
  text: string;
  replyTo?: string;
}

async function invitationEmail(
  workspace: { id: string; name: string },
  inviter: Inviter,
  request: InviteRequest,
  appUrl: string,
): Promise<InvitationEmail> {
  const user = await getUser(inviter.userId);
  const who = user?.name ?? 'A colleague';
  const from = user?.email ? `${who} (${user.email})` : who;
  const lines = [
    `${from} invited you to join the workspace "${workspace.name}" on Review Board as ${request.role}.`,
    '',
    ...(request.message ? ['Their message:', '', request.message, ''] : []),
    `Open ${appUrl} and sign in with this email address to start reviewing.`,
  ];
  return { subject: `${who} invited you to ${workspace.name} on Review Board`, text: lines.join('\n'), replyTo: user?.email ?? undefined };
}

async function sendInvitation(workspaceId: string, invitee: Invitee, email: InvitationEmail): Promise<void> {
  let sentAt: number | undefined;
  try {
    // Tests fail a send here (local stack only) to show that the invitation stays and a re-invite sends it.
    await failIfArmed('before-invitation-email', invitee.email);
    await sendEmail({ to: invitee.email, ...email });
    sentAt = Date.now();
  } catch (error) {
    logger.warn('invitation email not sent; inviting the address again retries it', { workspaceId, userId: invitee.userId, error });
  }
  await finishInvitationEmail(workspaceId, invitee.userId, sentAt);
}
