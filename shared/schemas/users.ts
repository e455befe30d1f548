import * as v from 'valibot';
import { Id } from './builders.js';

/** Workspace roles, strongest first: what members and keys are given, and what schemas accept. */
export const ROLES = ['owner', 'admin', 'contributor', 'viewer'] as const;

/** Where a workspace member stands: joined, or invited and not yet signed in. */
export const MEMBER_STATUSES = ['active', 'invited'] as const;

export const RoleSchema = v.picklist(ROLES, `must be one of ${ROLES.join(', ')}`);

/** A workspace user as `GET /users` lists them (DESIGN "Invitations"). */
export const WorkspaceUserSchema = v.object({
  id: Id,
  email: v.nullable(v.string()),
  name: v.string(),
  role: RoleSchema,
  status: v.picklist(MEMBER_STATUSES),
});

export type WorkspaceUserView = v.InferOutput<typeof WorkspaceUserSchema>;
