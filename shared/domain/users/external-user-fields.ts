import * as v from 'valibot';
import { EXTERNAL_ID_MAX_LENGTH } from '../../db/external-users.js';
import { HttpUrl, Name, printable } from '../../schemas/builders.js';

/**
 * The fields of an external user (Resources: Users), as requests send them and as customer JWT
 * claims fill them: one set of rules for both, so a record never holds what the API would refuse.
 */

/** The customer's own id of the user (the JWT's `sub`): kept exactly as sent. */
export const ExternalId = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(EXTERNAL_ID_MAX_LENGTH, `must be at most ${EXTERNAL_ID_MAX_LENGTH} characters`),
  printable,
  // A path segment of `.` or `..` is a dot segment: URLs resolve it away, so /users/external/{id} could never name the user.
  v.check((id) => id !== '.' && id !== '..', 'must not be . or .. (a URL path cannot name them)'),
);

export const ExternalUserName = Name;

/** Longest address SMTP allows (RFC 5321: 254 characters in a path). */
export const EMAIL_MAX_LENGTH = 254;

export const Email = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(EMAIL_MAX_LENGTH, `must be at most ${EMAIL_MAX_LENGTH} characters`),
  v.email('must be an email address'),
);

/** Avatars are shown in browsers on the customer's https pages: https only, so none is mixed content. */
export const AvatarUrl = v.pipe(
  HttpUrl,
  v.check((url) => new URL(url).protocol === 'https:', 'must be an https URL'),
);

export interface ExternalUserFields {
  name: string | null;
  email: string | null;
  avatarUrl: string | null;
  avatarFileId: string | null;
}
