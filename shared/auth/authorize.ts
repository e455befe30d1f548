import { getMember, statusOf, type Role } from '../db/users.js';
import { ForbiddenError } from '../errors.js';
import { requireLive } from './liveness.js';
import { allows, isEndUserRole, refusalOf, ruleOf, type AnyRole, type Permission } from './permissions.js';
import {
  credentialOf,
  type EndUserPrincipal,
  type OrganizationKeyPrincipal,
  type Principal,
  type RequestAuthorization,
  type SessionPrincipal,
} from './principal.js';

/** The workspace a permission is checked in: its id and organization. */
export interface WorkspaceRef {
  id: string;
  organizationId: string;
}

/** A route's permission for one request, as the api-handler hands it to the operation with the principal. */
export function withPermission<P extends Principal>(principal: P, permission: Permission): P {
  return { ...principal, authorization: { permission, authorized: false, roles: new Map() } };
}

function authorizationOf(principal: Principal): RequestAuthorization {
  if (!principal.authorization) throw new Error('authorize() was called for a principal without a route permission (withPermission).');
  return principal.authorization;
}

/**
 * The role a caller acts with in a workspace it reaches: organization keys and plain keys are
 * owners (DESIGN.md "API users and members"); a member key has its member's current role, and no
 * role at all when the membership is gone (never a fallback); an end user has its token's markup
 * role, which workspace membership never changes (Authentication: customer JWT exchange, rule 2).
 */
export async function roleOf(principal: Principal, workspaceId: string): Promise<AnyRole | undefined> {
  if (principal.kind === 'endUser') return principal.markupRole;
  if (principal.scope === 'organization' || !principal.actsAsMember) return 'owner';
  // A session token and a member key alike: the membership's current role, none once it is gone.
  const member = await getMember(workspaceId, principal.userId);
  // An invitation is not a membership: a removed member invited again acts with no role until they join.
  return member && statusOf(member) === 'active' ? member.role : undefined;
}

/**
 * 403 unless the workspace lies within the key's scope (its organization; for a workspace key, its
 * workspace). `subject` names what the request addressed, as the caller named it (`Thread <id>`),
 * for the message; loaders call it before they read the workspace, `authorize` again with the
 * workspace read. The message names nothing the caller did not send and may not see: never the
 * other workspace, nor the markup a thread or message it asked for is on (DESIGN.md "Problems name
 * only what the caller may see").
 */
export function requireInScope(principal: Principal, workspace: WorkspaceRef, subject?: string): void {
  if (inScope(principal, workspace)) return;
  if (workspace.organizationId !== principal.organizationId) {
    throw new ForbiddenError(
      `${subject ?? 'The workspace this request addresses'} is not in this ${credentialOf(principal)}'s organization.`,
      'workspace-out-of-scope',
    );
  }
  if (principal.scope === 'workspace' && workspace.id !== principal.workspaceId) {
    const target = subject === undefined ? 'another workspace' : `${lowerFirst(subject)}, which is in another workspace`;
    throw new ForbiddenError(
      `This ${credentialOf(principal)} is scoped to workspace ${principal.workspaceId} and cannot act on ${target}.`,
      'workspace-out-of-scope',
    );
  }
}

/**
 * THE scope rule, for callers that refuse in words of their own (an upload made into another
 * workspace): whether the workspace lies within the credential's reach, as `requireInScope` checks it.
 */
export function inScope(principal: Principal, workspace: WorkspaceRef): boolean {
  // A session reaches the workspaces its user is a member of, in any organization: `roleOf` decides (403 not-a-member).
  if (principal.kind === 'session') return true;
  return (
    workspace.organizationId === principal.organizationId && (principal.scope !== 'workspace' || workspace.id === principal.workspaceId)
  );
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

const organizationKeyRequired = (principal: Principal, permission: Permission) =>
  new ForbiddenError(
    `Only an organization-scoped API key may ${ruleOf(permission).action}; this ${credentialOf(principal)} is scoped to one workspace.`,
    'organization-key-required',
  );

function requireOrganizationKeyFor(principal: Principal, permission: Permission): void {
  if (ruleOf(permission).organizationKey && principal.scope !== 'organization') throw organizationKeyRequired(principal, permission);
  // Rows reserved to sessions are checked by `authorizeSession`; reaching one through a workspace is never a grant.
  if (ruleOf(permission).sessionOnly)
    throw new ForbiddenError(`Only a session token may ${ruleOf(permission).action}, and not on a workspace.`, 'session-token-required');
}

/** What `authorize` checks beyond the route's permission. */
export interface AuthorizeOptions {
  /** A second permission the operation needs, such as an upload's resource type's. */
  permission?: Permission;
  /**
   * The markup the request acts on, when it acts on one. End users may act only on a markup (and,
   * with a bound token, only on theirs): an end-user request that names none is refused.
   */
  markupId?: string;
  /**
   * What the request addressed when it reached `markupId` through something else, as the caller
   * named it (`Message <id>`): a refusal names it and not the markup it is on.
   */
  subject?: string;
}

/**
 * THE check of the permission table: the caller must reach `workspace` and hold, there, the role
 * the route's permission needs (and `permission`'s too, when an operation needs a second one, such
 * as an upload's resource type), with a live exchange token (401 otherwise, `requireLive`).
 * Answers the role; 403 `insufficient-role` names the role and the need. End users are checked
 * against the table's `endUser` column with their markup role, and must address a markup their
 * token reaches (403 `markup-out-of-scope`). Every credentialed operation passes here before it answers (the api-handler checks).
 */
export async function authorize(principal: Principal, workspace: WorkspaceRef, options: AuthorizeOptions = {}): Promise<AnyRole> {
  const authorization = authorizationOf(principal);
  // An exchange token whose installation or end user is gone is a 401 before anything else.
  await requireLive(principal);
  requireInScope(principal, workspace);
  const needed = [authorization.permission, ...(options.permission ? [options.permission] : [])];
  for (const permission of needed) requireOrganizationKeyFor(principal, permission);
  let role = authorization.roles.get(workspace.id);
  if (!role) {
    role = roleOf(principal, workspace.id);
    authorization.roles.set(workspace.id, role);
  }
  const resolved = await role;
  for (const permission of needed) {
    if (resolved === undefined) throw new ForbiddenError(refusalOf(undefined, permission), 'not-a-member');
    if (!allows(resolved, permission)) throw new ForbiddenError(refusalOf(resolved, permission), 'insufficient-role');
  }
  if (principal.kind === 'endUser') requireMarkupInReach(principal, options.markupId, options.subject);
  authorization.authorized = true;
  return resolved!;
}

/**
 * `authorize` for permissions the table closes to end users (administration): the role answered is
 * then always a workspace role. An end-user role here would mean a row opened to end users without
 * its operation being ready for them, so it is refused rather than trusted.
 */
export async function authorizeMember(principal: Principal, workspace: WorkspaceRef, options: AuthorizeOptions = {}): Promise<Role> {
  const role = await authorize(principal, workspace, options);
  if (isEndUserRole(role))
    throw new ForbiddenError(`The ${role} role cannot ${ruleOf(authorizationOf(principal).permission).action}.`, 'insufficient-role');
  return role;
}

/**
 * An end user acts on one markup per request: the one its token is bound to, or (unbound) any
 * markup of its workspace. A request that addresses no markup is refused rather than let through
 * on the workspace alone (fail closed: no table row can open workspace-wide data to end users).
 */
function requireMarkupInReach(principal: EndUserPrincipal, markupId: string | undefined, subject: string | undefined): void {
  if (markupId === undefined) {
    throw new ForbiddenError('An exchange token acts on one markup at a time, and this request addresses none.', 'markup-required');
  }
  if (principal.markupId !== undefined && principal.markupId !== markupId) {
    // A markup the caller named is named back; a thread's or message's markup never is: a token
    // asking for one must not learn which markup holds it.
    const target = subject === undefined ? `markup ${markupId}` : `${lowerFirst(subject)}, which is on another markup`;
    throw new ForbiddenError(
      `This exchange token is bound to markup ${principal.markupId} and cannot act on ${target}.`,
      'markup-out-of-scope',
    );
  }
}

/**
 * For permissions on the organization itself (listing and creating workspaces): only an
 * organization key, which acts as owner of every workspace of its organization.
 */
export function authorizeOrganization(principal: Principal): asserts principal is OrganizationKeyPrincipal {
  const authorization = authorizationOf(principal);
  if (principal.scope !== 'organization') throw organizationKeyRequired(principal, authorization.permission);
  authorization.authorized = true;
}

/**
 * The own-versus-others rule of the route's permission, on a record written by `authorId`: its
 * author acts with the ordinary minimum (already checked by `authorize`); anyone else needs the
 * table's `others` role, and nobody may where it is `false` (403 `not-<resource>-author`).
 */
export function authorizeOnRecordOf(principal: Principal, role: AnyRole, authorId: string): void {
  const { permission } = authorizationOf(principal);
  if (authorId === principal.userId || allows(role, permission, 'others')) return;
  const others = ruleOf(permission).others;
  if (others === false) {
    throw new ForbiddenError(
      `Only its author may do this (${ruleOf(permission).action}); it was written by someone else.`,
      `not-${permission.split(':')[0]}-author`,
    );
  }
  throw new ForbiddenError(refusalOf(role, permission, 'others'), 'insufficient-role');
}

/**
 * Whether the route's own-versus-others rule lets `role` act on anyone's record, so who wrote it
 * need not be read (`authorizeOnRecordOf` would let it through either way).
 */
export function mayActOnOthers(principal: Principal, role: AnyRole): boolean {
  return allows(role, authorizationOf(principal).permission, 'others');
}

/**
 * For operations on the session itself (`POST /auth/sign-out`, `GET /auth/session`): only a session
 * token, whatever its memberships; an API key or an exchange token is refused (403), it has no
 * session. Waits for the token's sign-out check (`requireLive`, 401) first, as `authorize` does, so
 * it is read before the operation writes (a sign-out must not find its own revocation).
 */
export async function authorizeSession(principal: Principal): Promise<SessionPrincipal> {
  const authorization = authorizationOf(principal);
  if (!ruleOf(authorization.permission).sessionOnly)
    throw new Error(`authorizeSession() was called for ${authorization.permission}, which the table does not reserve to session tokens.`);
  if (principal.kind !== 'session') {
    throw new ForbiddenError(
      `Only a session token may ${ruleOf(authorization.permission).action}; this is an ${credentialOf(principal)}.`,
      'session-token-required',
    );
  }
  await requireLive(principal);
  authorization.authorized = true;
  return principal;
}

/**
 * For permissions any live credential holds (`anyCredential`: a live-update ticket): the caller's
 * credential must still stand (`requireLive`, 401), and nothing more is asked here; what the
 * operation leads to is authorized where it happens.
 */
export async function authorizeCredential(principal: Principal): Promise<Principal> {
  const authorization = authorizationOf(principal);
  if (!ruleOf(authorization.permission).anyCredential)
    throw new Error(`authorizeCredential() was called for ${authorization.permission}, which the table does not open to every credential.`);
  await requireLive(principal);
  authorization.authorized = true;
  return principal;
}

/** Whether an apiKey request was authorized (the api-handler's guard). */
export function wasAuthorized(principal: Principal | undefined): boolean {
  return principal?.authorization?.authorized === true;
}
