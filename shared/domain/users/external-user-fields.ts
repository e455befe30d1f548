import * as v from 'valibot';
import { EXTERNAL_ID_MAX_LENGTH } from '../../db/external-users.js';
import { HttpUrl, Name } from '../../schemas/builders.js';

/**
 * The fields of an external user (Resources: Users), as requests send them and as customer JWT
 * claims fill them: one set of rules for both, so a record never holds what the API would refuse.
 */

// Lone surrogates cannot be stored as sent (UTF-8 has no form for them) nor put in a URL, and
// control characters have no place in an id or a name.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// eslint-disable-next-line no-control-regex -- control characters are what this refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** True for a string that can be stored and shown as sent: well-formed UTF-16, no control characters. */
export const isPrintable = (value: string): boolean => !LONE_SURROGATE.test(value) && !CONTROL.test(value);

const printable = v.check<string, string>(isPrintable, 'must be well-formed text without control characters');

/** The customer's own id of the user (the JWT's `sub`): kept exactly as sent. */
export const ExternalId = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(EXTERNAL_ID_MAX_LENGTH, `must be at most ${EXTERNAL_ID_MAX_LENGTH} characters`),
  printable,
);

export const ExternalUserName = v.pipe(Name, printable);

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
