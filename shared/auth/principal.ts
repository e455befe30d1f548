import type { Role } from '../db/users.js';
import type { Permission } from './permissions.js';

/** Who is calling. API keys act as their own API user, or as the workspace member they were made for. */
export type Principal = OrganizationKeyPrincipal | WorkspaceKeyPrincipal;

interface KeyPrincipalBase {
  kind: 'apiKey';
  keyId: string;
  organizationId: string;
  userId: string;
  /**
   * True when the key was made for a workspace member: it acts with the member's current role, and
   * with none once the membership is gone. False for plain keys, which act as owners.
   */
  actsAsMember: boolean;
  /** What this request may do: set by the api-handler from the route, consumed by `authorize`. */
  authorization?: RequestAuthorization;
}

export interface OrganizationKeyPrincipal extends KeyPrincipalBase {
  scope: 'organization';
  workspaceId?: undefined;
}

export interface WorkspaceKeyPrincipal extends KeyPrincipalBase {
  scope: 'workspace';
  workspaceId: string;
}

/** One request's authorization state: the route's permission, whether it was checked, the roles read. */
export interface RequestAuthorization {
  readonly permission: Permission;
  /** Set once `authorize` let the caller through; the api-handler refuses to answer without it. */
  authorized: boolean;
  /** The caller's role per workspace id (undefined: no role), read at most once per request. */
  readonly roles: Map<string, Promise<Role | undefined>>;
}
