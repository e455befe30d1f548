import * as v from 'valibot';
import { Email } from '../../shared/domain/users/external-user-fields.js';
import { ROLES } from '../../shared/schemas/users.js';
import { Id } from '../../shared/http/schemas.js';

export const EmailSignInBody = v.object({ email: v.pipe(Email, v.toLowerCase()) });

/** The code of a sign-in link: 256 random bits, base64url (43 characters). */
export const VerifySignInBody = v.object({
  code: v.pipe(
    v.string(),
    v.regex(/^[A-Za-z0-9_-]{43}$/, 'must be the 43-character code of a sign-in link (its code= parameter)'),
    v.examples(['q8Jm3ZtK0bW9xVd2L7pR4sYhN1cFgA6uE5oTiM0jQwB']),
  ),
});

export const SessionSchema = v.object({
  user: v.object({ id: Id, email: v.string(), name: v.string() }),
  expiresAt: v.pipe(v.string(), v.isoTimestamp()),
  workspaces: v.array(
    v.object({ id: Id, organizationId: Id, name: v.string(), rootFolderId: Id, archiveFolderId: Id, role: v.picklist(ROLES) }),
  ),
});

export const SignedInSchema = v.object({
  sessionToken: v.pipe(
    v.string(),
    v.examples(['eyJhbGciOiJFUzI1NiIsImtpZCI6ImxvY2FsLTEiLCJ0eXAiOiJyYnMtc2Vzc2lvbitqd3QifQ.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl']),
  ),
  expiresAt: v.pipe(v.string(), v.isoTimestamp()),
  user: v.object({ id: Id, email: v.string(), name: v.string() }),
});
