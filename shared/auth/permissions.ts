import type { Role } from '../db/users.js';

/**
 * THE permission table: what every operation of the API needs. Each route declares one permission
 * (`operation({ permission })`); `authorize` checks the caller's role against the permission's row,
 * and the `scopes` shown in responses are read from the same rows, so what a response offers and
 * what a request may do can never disagree.
 *
 * Columns:
 * - `member`: the least workspace role (viewer < contributor < admin < owner) of workspace members
 *   and API users. Plain keys and organization keys act as `owner` (DESIGN.md "API users and members").
 * - `others`: where a record has an author (threads, messages), the least role to act on someone
 *   else's; `false` when only its author may. Absent: the same as `member`.
 * - `endUser`: the least markup-bound role of an end user holding an exchange token (issue 11:
 *   `project:viewer < project:contributor < project:owner`), or `false` for what end users may never
 *   do (organization, workspace, folder and user administration). `endUserOthers` is their `others`.
 * - `organizationKey`: only an organization-scoped key may (listing and creating workspaces).
 * - `sessionOnly`: only a session token may, whatever its role (signing out, reading the session).
 *   Session tokens (the review app's members) otherwise act with their membership's role in the
 *   `member` column, like member keys.
 */

export type EndUserRole = 'project:viewer' | 'project:contributor' | 'project:owner';
/** A role the table knows: a workspace role, or an end user's role on one markup. */
export type AnyRole = Role | EndUserRole;

export interface PermissionRule {
  /** What the permission allows, as the end of "The viewer role cannot …". */
  action: string;
  member: Role;
  others?: Role | false;
  endUser: EndUserRole | false;
  endUserOthers?: EndUserRole | false;
  organizationKey?: true;
  sessionOnly?: true;
  /**
   * Any live credential may, whatever its kind and role, because the operation reaches no
   * workspace by itself: what it leads to is authorized on its own (a live-update ticket: each
   * subscription is authorized like `GET /markups/{id}`).
   */
  anyCredential?: true;
}

export const PERMISSIONS = {
  'workspace:list': { action: "list the organization's workspaces", member: 'owner', endUser: false, organizationKey: true },
  'workspace:create': { action: 'create workspaces', member: 'owner', endUser: false, organizationKey: true },
  'workspace:read': { action: 'read the workspace, its settings and usage', member: 'viewer', endUser: false },
  'workspace:update': { action: 'rename the workspace or change its settings', member: 'admin', endUser: false },
  'workspace:delete': { action: 'delete the workspace', member: 'owner', endUser: false },
  'storage:read': { action: "read the organization's storage breakdown", member: 'viewer', endUser: false },
  'original:read': { action: "download markups' original files", member: 'viewer', endUser: false },
  'original:manage': { action: "keep or archive markups' original files", member: 'admin', endUser: false },
  'markup:list': { action: "list or search the workspace's markups", member: 'viewer', endUser: false },
  'markup:read': { action: 'read markups', member: 'viewer', endUser: 'project:viewer' },
  'markup:create': { action: 'create markups', member: 'contributor', endUser: false },
  // The tag list is a directory of the workspace's members (names, emails, roles): closed to end users like GET /users.
  'markup:tags': { action: 'list who can be tagged on markups (the workspace members)', member: 'viewer', endUser: false },
  'markup:rename': { action: 'rename markups', member: 'contributor', endUser: 'project:owner' },
  'markup:read-only': { action: 'pause or resume comments on markups', member: 'admin', endUser: 'project:owner' },
  'markup:delete': { action: 'delete markups', member: 'admin', endUser: false },
  'item:read': { action: 'read folders', member: 'viewer', endUser: false },
  'item:create': { action: 'create folders', member: 'contributor', endUser: false },
  'item:update': { action: 'rename, move, archive or restore items', member: 'contributor', endUser: false },
  'item:delete': { action: 'delete items', member: 'admin', endUser: false },
  'thread:read': { action: 'read comments', member: 'viewer', endUser: 'project:viewer' },
  'thread:mark-read': { action: 'mark comments read', member: 'viewer', endUser: 'project:viewer' },
  'thread:create': { action: 'open threads', member: 'contributor', endUser: 'project:contributor' },
  'thread:update': {
    action: 'resolve threads, move their pins or attach screenshots',
    member: 'contributor',
    endUser: 'project:contributor',
    endUserOthers: 'project:owner',
  },
  'thread:delete': {
    action: 'delete threads',
    member: 'contributor',
    others: 'admin',
    endUser: 'project:contributor',
    endUserOthers: 'project:owner',
  },
  'message:create': { action: 'reply to threads', member: 'contributor', endUser: 'project:contributor' },
  'message:update': { action: 'edit messages', member: 'contributor', others: false, endUser: 'project:contributor', endUserOthers: false },
  'message:delete': {
    action: 'delete messages',
    member: 'contributor',
    others: 'admin',
    endUser: 'project:contributor',
    endUserOthers: 'project:owner',
  },
  'upload:create': { action: 'upload files', member: 'viewer', endUser: 'project:contributor' },
  'upload:complete': { action: 'confirm uploads', member: 'viewer', endUser: 'project:contributor' },
  'user:update-self': { action: 'change their own avatar', member: 'viewer', endUser: false },
  'installation:read': { action: "read the workspace's installations", member: 'viewer', endUser: false },
  'installation:manage': { action: 'create or delete installations', member: 'admin', endUser: false },
  'external-user:update': { action: 'change external users or upload their avatars', member: 'contributor', endUser: false },
  'external-user:read': { action: 'read external users', member: 'viewer', endUser: false },
  'external-user:create': { action: 'create external users', member: 'contributor', endUser: false },
  'external-user:delete': { action: 'delete external users', member: 'admin', endUser: false },
  'user:list': { action: "list the workspace's members and invitees", member: 'viewer', endUser: false },
  'user:invite': { action: 'invite people to the workspace', member: 'admin', endUser: false },
  'user:manage': { action: "change members' roles or remove members", member: 'admin', endUser: false },
  // Registrations show their signing keys, which forge deliveries: reading them is an admin's, like changing them.
  'webhook:read': { action: "read the workspace's webhook registrations and their signing keys", member: 'admin', endUser: false },
  'webhook:manage': { action: 'create, change or delete webhook registrations', member: 'admin', endUser: false },
  // A session token ends itself (authorizeSession); API keys and exchange tokens have no session to end.
  'session:sign-out': { action: 'sign out', member: 'viewer', endUser: false, sessionOnly: true },
  'session:read': { action: 'read their session and the workspaces they belong to', member: 'viewer', endUser: false, sessionOnly: true },
  // A ticket only opens a socket; every subscription on it is authorized like GET /markups/{id} (authorizeCredential).
  'live:ticket': { action: 'open live-update connections', member: 'viewer', endUser: 'project:viewer', anyCredential: true },
} as const satisfies Record<string, PermissionRule>;

export type Permission = keyof typeof PERMISSIONS;

export const WORKSPACE_ROLE_ORDER: readonly Role[] = ['viewer', 'contributor', 'admin', 'owner'];
export const END_USER_ROLE_ORDER: readonly EndUserRole[] = ['project:viewer', 'project:contributor', 'project:owner'];

export const isEndUserRole = (role: AnyRole): role is EndUserRole => role.startsWith('project:');

export function ruleOf(permission: Permission): PermissionRule {
  return PERMISSIONS[permission];
}

/**
 * The least role of `role`'s kind that `permission` needs, on the caller's own record (`own`, the
 * default) or on someone else's; `false` when no role of that kind may.
 */
export function minimumRole(permission: Permission, kind: 'member' | 'endUser', on: 'own' | 'others' = 'own'): AnyRole | false {
  const rule = ruleOf(permission);
  if (kind === 'member') return on === 'others' && rule.others !== undefined ? rule.others : rule.member;
  return on === 'others' && rule.endUserOthers !== undefined ? rule.endUserOthers : rule.endUser;
}

function rank(role: AnyRole): number {
  return isEndUserRole(role) ? END_USER_ROLE_ORDER.indexOf(role) : WORKSPACE_ROLE_ORDER.indexOf(role);
}

/**
 * Whether `role` may use `permission`: on its own records, or (`on: 'others'`) on someone else's.
 * Workspace roles are compared with workspace roles, end-user roles with end-user roles; one kind
 * never reaches the other's rows.
 */
export function allows(role: AnyRole, permission: Permission, on: 'own' | 'others' = 'own'): boolean {
  const minimum = minimumRole(permission, isEndUserRole(role) ? 'endUser' : 'member', on);
  return minimum !== false && rank(role) >= rank(minimum);
}

/** Why `role` is refused `permission`, naming the role it has and the one it needs. */
export function refusalOf(role: AnyRole | undefined, permission: Permission, on: 'own' | 'others' = 'own'): string {
  const rule = ruleOf(permission);
  const whose = on === 'others' ? " other people's records" : '';
  if (role === undefined)
    return `This credential's user is not a member of the workspace, so it has no role there and cannot ${rule.action}.`;
  const minimum = minimumRole(permission, isEndUserRole(role) ? 'endUser' : 'member', on);
  if (minimum === false) return `The ${role} role cannot ${rule.action}${whose ? ` on${whose}` : ''}; no role of its kind may.`;
  return `The ${role} role cannot ${rule.action}${whose ? ` on${whose}` : ''}; it needs ${minimum} or above.`;
}

/** What end users need on other people's records, where that differs from their own. */
function endUserOthersText(others: EndUserRole | false | undefined): string {
  if (others === undefined) return '';
  return others === false ? ', only on their own' : ` on their own, ${others} or above on other people's`;
}

/** One sentence for documentation: who may use `permission`. */
export function describePermission(permission: Permission): string {
  const rule = ruleOf(permission);
  if (rule.sessionOnly)
    return `Needs \`${permission}\`: a session token (a signed-in member, any role); not open to API keys or end users.`;
  const parts = [
    `Needs \`${permission}\`: ${rule.organizationKey ? 'an organization-scoped key' : `workspace role ${rule.member} or above`}`,
  ];
  if (rule.others !== undefined)
    parts.push(rule.others === false ? 'only the author acts on their own' : `${rule.others} or above on other people's`);
  parts.push(
    rule.endUser === false ? 'not open to end users' : `end users ${rule.endUser} or above${endUserOthersText(rule.endUserOthers)}`,
  );
  return `${parts.join('; ')}.`;
}
