import * as v from 'valibot';
import { RoleSchema } from '../../shared/schemas/users.js';
import { MAX_INVITE_EMAILS, MAX_INVITE_MESSAGE_LENGTH } from '../../shared/domain/organizations/invitations.js';
import { Id } from '../../shared/http/schemas.js';

export const Role = RoleSchema;

/** An email address as people type it: trimmed, at most 254 characters (RFC 5321), compared lower-case. */
const EmailAddress = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(254, 'must be at most 254 characters'),
  v.email('must be an email address'),
  v.toLowerCase(),
);

export const InviteBody = v.object({
  emails: v.pipe(
    v.array(EmailAddress),
    v.minLength(1, 'must list at least one address'),
    v.maxLength(MAX_INVITE_EMAILS, `must list at most ${MAX_INVITE_EMAILS} addresses`),
  ),
  message: v.optional(
    v.pipe(v.string(), v.maxLength(MAX_INVITE_MESSAGE_LENGTH, `must be at most ${MAX_INVITE_MESSAGE_LENGTH} characters`)),
  ),
  role: v.optional(Role, 'contributor'),
});

export const RoleBody = v.object({ role: Role });

export const UserIdParams = v.object({ userId: Id });

export { WorkspaceUserSchema as WorkspaceUser } from '../../shared/schemas/users.js';
