import * as v from 'valibot';
import { AvatarUrl, Email, ExternalId, ExternalUserName } from '../../shared/domain/users/external-user-fields.js';
import { Id, WorkspaceIdInput } from '../../shared/http/schemas.js';

/** An external user as answered (Resources: Users); `id` is the user its threads and messages carry. */
export const ExternalUserSchema = v.object({
  id: Id,
  externalId: v.string(),
  name: v.nullable(v.string()),
  email: v.nullable(v.string()),
  avatarUrl: v.nullable(v.string()),
  avatarFileId: v.nullable(Id),
  createdAt: v.number(),
  modifiedAt: v.number(),
});

/** The settable fields; null clears one (and on creation means the same as leaving it out). */
const fields = {
  name: v.optional(v.nullable(ExternalUserName)),
  email: v.optional(v.nullable(Email)),
  avatarUrl: v.optional(v.nullable(AvatarUrl)),
  avatarFileId: v.optional(v.nullable(Id)),
};

export const CreateExternalUserBody = v.object({ externalId: ExternalId, ...fields, workspaceId: v.optional(Id) });

/** Every field optional (spec: Users endpoints); a body that changes nothing answers the user as it is. */
export const UpdateExternalUserBody = v.object({ ...fields, workspaceId: v.optional(Id) });

export const ExternalUserParams = v.object({ externalId: ExternalId });

export const ExternalUserQuery = WorkspaceIdInput;
