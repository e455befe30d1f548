import type { LivenessCheck } from './liveness.js';
import type { AnyRole, EndUserRole, Permission } from './permissions.js';

/**
 * Who is calling. API keys act as their own API user, or as the workspace member they were made
 * for; an exchange token acts as an end user (an external user of one workspace) with a role on
 * markups, bound to one markup or to the whole workspace.
 */
export type Principal = OrganizationKeyPrincipal | WorkspaceKeyPrincipal | EndUserPrincipal | SessionPrincipal;

/** A caller holding an API key (server to server). */
export type KeyPrincipal = OrganizationKeyPrincipal | WorkspaceKeyPrincipal;

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

/**
 * An end user holding an exchange token (DESIGN.md "Exchange tokens"). Scoped to one workspace like
 * a workspace key, so every scope check that holds for workspace keys holds for it; what it may do
 * is the permission table's `endUser` column, checked against `markupRole`.
 */
export interface EndUserPrincipal {
  kind: 'endUser';
  scope: 'workspace';
  organizationId: string;
  workspaceId: string;
  /** The external user's User record: the author of what the end user writes, the owner of its read state. */
  userId: string;
  externalId: string;
  installationId: string;
  markupRole: EndUserRole;
  /** Set when the token is bound to one markup: every other markup is out of reach (403). */
  markupId?: string;
  /** End users never act as workspace members. */
  actsAsMember: false;
  /** When the exchange token expires (epoch ms): what a live connection opened with it lasts at most. */
  expiresAt?: number;
  /**
   * Whether the installation and external user the token stands for still exist: read once per
   * request, with its markup or on its own, and waited for by `authorize` and the api-handler
   * (`liveness.ts`); one object shared by every copy of the principal.
   */
  live?: LivenessCheck;
  keyId?: undefined;
  authorization?: RequestAuthorization;
}

/**
 * A person signed in to the review app with a session token (`POST /auth/email-sign-in/verify`):
 * a member of each workspace they belong to, with that membership's current role (no role where
 * they are not an active member: 403). Like an organization key it names the workspace a
 * workspace-scoped route acts on (`workspaceId`); unlike one, it reaches no organization as such,
 * so organization-key rows of the permission table refuse it.
 */
export interface SessionPrincipal {
  kind: 'session';
  scope: 'member';
  /** The member's User record. */
  userId: string;
  /** The token's `jti`: what `POST /auth/sign-out` revokes. */
  sessionId: string;
  /** When the token expires (epoch ms): its revocation is kept until then. */
  expiresAt: number;
  /** A session belongs to no one organization: workspaces it reaches are its memberships'. */
  organizationId?: undefined;
  workspaceId?: undefined;
  /** Always a member: its role is read from its membership of the workspace. */
  actsAsMember: true;
  /**
   * Whether the token was not signed out: read at authentication beside the request's own work and
   * waited for, like an exchange token's liveness, before it writes or answers (`liveness.ts`).
   */
  live?: LivenessCheck;
  keyId?: undefined;
  authorization?: RequestAuthorization;
}

/** One request's authorization state: the route's permission, whether it was checked, the roles read. */
export interface RequestAuthorization {
  readonly permission: Permission;
  /** Set once `authorize` let the caller through; the api-handler refuses to answer without it. */
  authorized: boolean;
  /** The caller's role per workspace id (undefined: no role), read at most once per request. */
  readonly roles: Map<string, Promise<AnyRole | undefined>>;
}

/**
 * What the caller holds, for messages: an end user has an exchange token and never an API key, so
 * what the service tells an embedded client must not send it looking for one.
 */
export function credentialOf(principal: Pick<Principal, 'kind'>): 'exchange token' | 'API key' | 'session token' {
  if (principal.kind === 'session') return 'session token';
  return principal.kind === 'endUser' ? 'exchange token' : 'API key';
}
