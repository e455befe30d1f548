import {
  requestSignInLink,
  sessionView,
  signOut,
  SIGN_IN_RATE_LIMITS,
  verifySignInCode,
} from '../../shared/domain/sign-in/email-sign-in.js';
import { noContent, ok, operation, type Reply } from '../../shared/http/route.js';
import { EmailSignInBody, SessionSchema, SignedInSchema, VerifySignInBody } from './sign-in-schemas.js';

const { perAddress, perSourceIp } = SIGN_IN_RATE_LIMITS;

export const emailSignInOperation = operation({
  operationId: 'emailSignIn',
  summary: 'Send a sign-in link',
  extension: true,
  description:
    'Emails a sign-in link for the review app to a member or invitee of any workspace: `<appUrl>/sign-in?code=…`, which works once, for 15 minutes. ' +
    'No credential. Answers 202 with no body whatever the address, so it tells no one who is a member; only members and invitees get an email. ' +
    `Rate-limited per address (${perAddress.limit} every ${perAddress.windowMs / 60_000} minutes) and per source IP ` +
    `(${perSourceIp.limit} every ${perSourceIp.windowMs / 60_000} minutes), unknown addresses alike: past either, 429 with \`Retry-After\`.`,
  auth: 'none',
  body: EmailSignInBody,
  responses: [
    { status: 202, description: 'Accepted: a link is on its way if the address belongs to a member or invitee' },
    { status: 429, description: 'Too many requests for this address or from this source IP; retry after `Retry-After` seconds' },
  ],
  handle: async ({ body, sourceIp, appUrl }): Promise<Reply> => {
    await requestSignInLink(body.email, sourceIp, appUrl);
    return { status: 202 };
  },
});

export const verifySignInOperation = operation({
  operationId: 'verifyEmailSignIn',
  summary: 'Sign in with a link code',
  extension: true,
  description:
    'Exchanges the `code` of a sign-in link for a session token (12 hours). No credential: the code is the credential of this call, ' +
    'so a code that does not work is 401, like a customer JWT that does not verify at `POST /auth/exchange`; used, expired and unknown codes get the same 401, ' +
    'which tells nothing about which. An invitee becomes an active member at this first sign-in, and the address counts as verified. ' +
    "Send `sessionToken` as `Authorization: Bearer`: it acts as a member of each workspace the person belongs to, with that membership's role " +
    '(name the workspace with `workspaceId` where a route needs one, as organization keys do).',
  auth: 'none',
  body: VerifySignInBody,
  responses: [
    { status: 200, description: 'Signed in', schema: SignedInSchema },
    { status: 401, description: 'The code was used already, expired (15 minutes) or never issued' },
    { status: 403, description: 'The address is no longer a member of any workspace' },
  ],
  handle: async ({ body }) => ok(await verifySignInCode(body.code)),
});

export const signOutOperation = operation({
  operationId: 'signOut',
  summary: 'Sign out',
  extension: true,
  description:
    'Revokes the session token the request carries: from this answer on it gets 401. Only a session token signs out (403 for API keys and exchange tokens).',
  auth: 'apiKey',
  permission: 'session:sign-out',
  responses: [{ status: 204, description: 'Signed out' }],
  handle: async ({ principal }) => {
    await signOut(principal);
    return noContent();
  },
});

export const getSessionOperation = operation({
  operationId: 'getSession',
  summary: 'Get the signed-in member',
  extension: true,
  description:
    'Who the session token is signed in as, until when, and the workspaces where they are an active member, each with their role ' +
    '(by name; `id` is the `workspaceId` to name on workspace-scoped routes, `rootFolderId` the folder to browse). Only a session token (403 for API keys and exchange tokens).',
  auth: 'apiKey',
  permission: 'session:read',
  responses: [{ status: 200, description: 'The signed-in member and their workspaces', schema: SessionSchema }],
  handle: async ({ principal }) => ok(await sessionView(principal)),
});

/** The sign-in routes, for the auth group's route table. */
export const signInRoutes = {
  'POST /api/v2/auth/email-sign-in': emailSignInOperation,
  'POST /api/v2/auth/email-sign-in/verify': verifySignInOperation,
  'POST /api/v2/auth/sign-out': signOutOperation,
  'GET /api/v2/auth/session': getSessionOperation,
} as const;
