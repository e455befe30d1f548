import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import { authorize, authorizeCredential, authorizeOnRecordOf, authorizeSession } from '../../shared/auth/authorize.js';
import {
  allows,
  describePermission,
  END_USER_ROLE_ORDER,
  PERMISSIONS,
  refusalOf,
  WORKSPACE_ROLE_ORDER,
  type AnyRole,
  type EndUserRole,
  type Permission,
} from '../../shared/auth/permissions.js';
import type { Principal } from '../../shared/auth/principal.js';
import type { Role } from '../../shared/db/users.js';
import { RESOURCE_RULES } from '../../shared/domain/uploads/rules.js';
import { buildOpenApi } from '../../shared/http/openapi.js';

const permissions = Object.keys(PERMISSIONS) as Permission[];
const allRoles: AnyRole[] = [...WORKSPACE_ROLE_ORDER, ...END_USER_ROLE_ORDER];
const allowedRoles = (permission: Permission, on: 'own' | 'others' = 'own') => allRoles.filter((role) => allows(role, permission, on));

describe('the permission table (issue 18: one table, members, API users and end users)', () => {
  it.each([
    ['workspace:read', ['viewer', 'contributor', 'admin', 'owner']],
    ['workspace:update', ['admin', 'owner']],
    ['workspace:delete', ['owner']],
    ['original:manage', ['admin', 'owner']],
    ['markup:read', ['viewer', 'contributor', 'admin', 'owner', 'project:viewer', 'project:contributor', 'project:owner']],
    ['markup:create', ['contributor', 'admin', 'owner']],
    ['markup:delete', ['admin', 'owner']],
    ['item:update', ['contributor', 'admin', 'owner']],
    ['item:delete', ['admin', 'owner']],
    ['thread:create', ['contributor', 'admin', 'owner', 'project:contributor', 'project:owner']],
    ['thread:mark-read', ['viewer', 'contributor', 'admin', 'owner', 'project:viewer', 'project:contributor', 'project:owner']],
  ] as [Permission, AnyRole[]][])('lets exactly these roles use %s on their own records', (permission, expected) => {
    expect(allowedRoles(permission)).toEqual(expected);
  });

  it.each([
    ['thread:delete', ['admin', 'owner', 'project:owner']],
    ['message:delete', ['admin', 'owner', 'project:owner']],
    ['message:update', []],
    ['thread:update', ['contributor', 'admin', 'owner', 'project:owner']],
  ] as [Permission, AnyRole[]][])("lets exactly these roles use %s on other people's records", (permission, expected) => {
    expect(allowedRoles(permission, 'others')).toEqual(expected);
  });

  it('orders every role pair: a role allowed something allows every higher role of its kind the same', () => {
    for (const permission of permissions) {
      for (const on of ['own', 'others'] as const) {
        for (const order of [WORKSPACE_ROLE_ORDER, END_USER_ROLE_ORDER] as readonly (readonly AnyRole[])[]) {
          order.forEach((lower, index) => {
            for (const higher of order.slice(index + 1)) {
              if (allows(lower, permission, on))
                expect(allows(higher, permission, on), `${permission} ${on}: ${lower} < ${higher}`).toBe(true);
            }
          });
        }
      }
    }
  });

  it("never asks less on other people's records than on one's own", () => {
    for (const permission of permissions) {
      for (const role of allRoles)
        if (allows(role, permission, 'others')) expect(allows(role, permission, 'own'), `${permission} ${role}`).toBe(true);
    }
  });

  it('keeps end users out of organization and workspace administration', () => {
    const administration = permissions.filter((permission) => /^(workspace|storage|item|original|user|external-user):/.test(permission));

    for (const permission of administration)
      expect(
        allowedRoles(permission).filter((role) => role.startsWith('project:')),
        permission,
      ).toEqual([]);
  });

  it('names the role and the need when it refuses, and says when there is no membership', () => {
    expect(refusalOf('viewer', 'workspace:delete')).toBe('The viewer role cannot delete the workspace; it needs owner or above.');
    expect(refusalOf('contributor', 'message:delete', 'others')).toContain('it needs admin or above');
    expect(refusalOf(undefined, 'workspace:read')).toContain('not a member');
  });
});

describe('every route declares a permission of the table (a new route cannot skip it)', () => {
  const routes = allRoutes();

  it('gives every keyed route a permission and none to the routes that need no key', () => {
    for (const route of routes) {
      if (route.auth === 'apiKey') expect(PERMISSIONS, `${route.method} ${route.path}`).toHaveProperty([route.permission!]);
      else expect(route.permission, `${route.method} ${route.path}`).toBeUndefined();
    }
  });

  it('uses every row of the table (routes and upload resource types), so no rule is dead', () => {
    const used = new Set<string | undefined>([
      ...routes.map((route) => route.permission),
      ...Object.values(RESOURCE_RULES).map((rule) => rule.permission),
    ]);

    expect(permissions.filter((permission) => !used.has(permission))).toEqual([]);
  });

  it("shows each operation's permission and minimum role in the OpenAPI document", () => {
    const document = buildOpenApi(routes) as { paths: Record<string, Record<string, Record<string, unknown>>> };

    for (const route of routes.filter((candidate) => candidate.permission)) {
      const operation = document.paths[route.path]![route.method.toLowerCase()]!;
      expect(operation['x-permission']).toBe(route.permission);
      expect(operation['x-minimum-role']).toBe(PERMISSIONS[route.permission!].member);
      expect(operation.description).toContain(describePermission(route.permission!));
    }
  });

  it("says when end users need a higher role on other people's records than on their own", () => {
    expect(describePermission('thread:update')).toBe(
      "Needs `thread:update`: workspace role contributor or above; end users project:contributor or above on their own, project:owner or above on other people's.",
    );
    expect(describePermission('message:update')).toBe(
      'Needs `message:update`: workspace role contributor or above; only the author acts on their own; end users project:contributor or above, only on their own.',
    );
    expect(describePermission('thread:read')).toBe(
      'Needs `thread:read`: workspace role viewer or above; end users project:viewer or above.',
    );
  });
});

/**
 * EVERY row of the table (issue 33 item 4), through THE check (`authorize`, `authorizeOnRecordOf`,
 * `authorizeSession`, `authorizeCredential`) with every role of both kinds, without a database: the
 * caller's role is the one the request already read (`authorization.roles`). A row added, removed or
 * changed fails here until this table says the same. Columns: the roles allowed on their own
 * records, on other people's (`p:` for `project:`), and the row's flags.
 */
const EVERY_ROW: [Permission, string, string, ('organizationKey' | 'sessionOnly' | 'anyCredential')[]?][] = [
  ['workspace:list', 'owner', 'owner', ['organizationKey']],
  ['workspace:create', 'owner', 'owner', ['organizationKey']],
  ['workspace:read', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  ['workspace:update', 'admin owner', 'admin owner'],
  ['workspace:delete', 'owner', 'owner'],
  ['storage:read', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  ['original:read', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  ['original:manage', 'admin owner', 'admin owner'],
  ['markup:list', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  [
    'markup:read',
    'viewer contributor admin owner p:viewer p:contributor p:owner',
    'viewer contributor admin owner p:viewer p:contributor p:owner',
  ],
  ['markup:create', 'contributor admin owner', 'contributor admin owner'],
  ['markup:tags', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  ['markup:rename', 'contributor admin owner p:owner', 'contributor admin owner p:owner'],
  ['markup:read-only', 'admin owner p:owner', 'admin owner p:owner'],
  ['markup:delete', 'admin owner', 'admin owner'],
  ['item:read', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  ['item:create', 'contributor admin owner', 'contributor admin owner'],
  ['item:update', 'contributor admin owner', 'contributor admin owner'],
  ['item:delete', 'admin owner', 'admin owner'],
  [
    'thread:read',
    'viewer contributor admin owner p:viewer p:contributor p:owner',
    'viewer contributor admin owner p:viewer p:contributor p:owner',
  ],
  [
    'thread:mark-read',
    'viewer contributor admin owner p:viewer p:contributor p:owner',
    'viewer contributor admin owner p:viewer p:contributor p:owner',
  ],
  ['thread:create', 'contributor admin owner p:contributor p:owner', 'contributor admin owner p:contributor p:owner'],
  ['thread:update', 'contributor admin owner p:contributor p:owner', 'contributor admin owner p:owner'],
  ['thread:delete', 'contributor admin owner p:contributor p:owner', 'admin owner p:owner'],
  ['message:create', 'contributor admin owner p:contributor p:owner', 'contributor admin owner p:contributor p:owner'],
  ['message:update', 'contributor admin owner p:contributor p:owner', ''],
  ['message:delete', 'contributor admin owner p:contributor p:owner', 'admin owner p:owner'],
  ['upload:create', 'viewer contributor admin owner p:contributor p:owner', 'viewer contributor admin owner p:contributor p:owner'],
  ['upload:complete', 'viewer contributor admin owner p:contributor p:owner', 'viewer contributor admin owner p:contributor p:owner'],
  ['user:update-self', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  ['installation:read', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  ['installation:manage', 'admin owner', 'admin owner'],
  ['external-user:update', 'contributor admin owner', 'contributor admin owner'],
  ['external-user:read', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  ['external-user:create', 'contributor admin owner', 'contributor admin owner'],
  ['external-user:delete', 'admin owner', 'admin owner'],
  ['user:list', 'viewer contributor admin owner', 'viewer contributor admin owner'],
  ['user:invite', 'admin owner', 'admin owner'],
  ['user:manage', 'admin owner', 'admin owner'],
  ['webhook:read', 'admin owner', 'admin owner'],
  ['webhook:manage', 'admin owner', 'admin owner'],
  ['session:sign-out', 'viewer contributor admin owner', 'viewer contributor admin owner', ['sessionOnly']],
  ['session:read', 'viewer contributor admin owner', 'viewer contributor admin owner', ['sessionOnly']],
  [
    'live:ticket',
    'viewer contributor admin owner p:viewer p:contributor p:owner',
    'viewer contributor admin owner p:viewer p:contributor p:owner',
    ['anyCredential'],
  ],
];

const WORKSPACE = { id: 'ws-1', organizationId: 'org-1' };
const MARKUP = 'markup-1';
const fullRole = (role: string) => role.replace(/^p:/, 'project:') as AnyRole;
const rolesIn = (column: string) => (column === '' ? [] : column.split(' ').map(fullRole));
const live = { answer: Promise.resolve(true) };

/** A caller whose role in WORKSPACE the request already read, holding `permission` from its route. */
function callerWith(role: AnyRole, permission: Permission, kind: 'member-key' | 'organization-key' | 'session' = 'member-key'): Principal {
  const authorization = { permission, authorized: false, roles: new Map([[WORKSPACE.id, Promise.resolve(role)]]) };
  if (role.startsWith('project:')) {
    return {
      kind: 'endUser',
      scope: 'workspace',
      organizationId: 'org-1',
      workspaceId: WORKSPACE.id,
      userId: 'end-user',
      externalId: 'e',
      installationId: 'i',
      markupRole: role as EndUserRole,
      markupId: MARKUP,
      actsAsMember: false,
      live,
      authorization,
    };
  }
  if (kind === 'session')
    return {
      kind: 'session',
      scope: 'member',
      userId: 'member',
      sessionId: 's',
      expiresAt: Date.now() + 60_000,
      actsAsMember: true,
      live,
      authorization,
    };
  const key = {
    kind: 'apiKey' as const,
    keyId: 'k',
    organizationId: 'org-1',
    userId: 'member',
    actsAsMember: kind === 'member-key',
    authorization,
  };
  return kind === 'organization-key' ? { ...key, scope: 'organization' } : { ...key, scope: 'workspace', workspaceId: WORKSPACE.id };
}

/** The 403 slug `work` refuses with, or 'allowed'. */
async function outcome(work: () => unknown): Promise<string> {
  try {
    await work();
    return 'allowed';
  } catch (error) {
    return (error as { slug?: string }).slug ?? String(error);
  }
}

describe('every row of the permission table, through the checks every operation passes (issue 33 item 4)', () => {
  it('lists every row of the table, and nothing else', () => {
    expect(EVERY_ROW.map(([permission]) => permission).sort()).toEqual([...permissions].sort());
  });

  it.each(EVERY_ROW)('%s: exactly these roles on their own records (%s)', async (permission, own, _others, flags = []) => {
    const allowed: AnyRole[] = [];
    for (const role of allRoles) {
      const kind = flags.includes('organizationKey') ? 'organization-key' : flags.includes('sessionOnly') ? 'session' : 'member-key';
      const caller = callerWith(role, permission, kind);
      const check = flags.includes('sessionOnly')
        ? () => authorizeSession(caller)
        : flags.includes('anyCredential')
          ? () => authorizeCredential(caller)
          : () => authorize(caller, WORKSPACE, { markupId: MARKUP });
      const answer = await outcome(check);
      if (answer === 'allowed') allowed.push(role);
      else
        expect(['insufficient-role', 'session-token-required', 'organization-key-required'], `${permission} ${role}: ${answer}`).toContain(
          answer,
        );
    }

    // Sessions and live tickets are not a matter of role: every role of the credential kind the row admits passes.
    expect(allowed, permission).toEqual(flags.includes('sessionOnly') ? WORKSPACE_ROLE_ORDER : rolesIn(own));
  });

  it.each(EVERY_ROW)("%s: exactly these roles on other people's records (%s | %s)", async (permission, _own, others) => {
    const allowed = [];
    for (const role of allRoles) {
      if ((await outcome(() => authorizeOnRecordOf(callerWith(role, permission), role, 'someone-else'))) === 'allowed') allowed.push(role);
      // Its author acts with the ordinary minimum, checked by `authorize`.
      expect(
        await outcome(() => authorizeOnRecordOf(callerWith(role, permission), role, role.startsWith('project:') ? 'end-user' : 'member')),
      ).toBe('allowed');
    }

    expect(allowed).toEqual(rolesIn(others));
  });

  it.each(EVERY_ROW.filter(([, , , flags]) => flags?.includes('organizationKey')))(
    '%s: only an organization key, never a workspace key or an end user',
    async (permission) => {
      expect(await outcome(() => authorize(callerWith('owner', permission, 'organization-key'), WORKSPACE))).toBe('allowed');
      expect(await outcome(() => authorize(callerWith('owner', permission, 'member-key'), WORKSPACE))).toBe('organization-key-required');
      expect(await outcome(() => authorize(callerWith('project:owner', permission), WORKSPACE, { markupId: MARKUP }))).toBe(
        'organization-key-required',
      );
    },
  );

  it.each(EVERY_ROW.filter(([, , , flags]) => flags?.includes('sessionOnly')))(
    '%s: only a session token, and never through a workspace',
    async (permission) => {
      for (const role of allRoles) {
        expect(await outcome(() => authorizeSession(callerWith(role, permission, 'member-key'))), role).toBe('session-token-required');
        expect(await outcome(() => authorize(callerWith(role, permission, 'session'), WORKSPACE, { markupId: MARKUP })), role).toBe(
          'session-token-required',
        );
      }
    },
  );

  it('opens nothing but what the table opens to end users: every end-user row also needs the markup the token is bound to', async () => {
    for (const [permission, own, , flags] of EVERY_ROW) {
      if (flags?.length || !rolesIn(own).includes('project:owner')) continue;
      expect(await outcome(() => authorize(callerWith('project:owner', permission), WORKSPACE)), permission).toBe('markup-required');
      expect(await outcome(() => authorize(callerWith('project:owner', permission), WORKSPACE, { markupId: 'another' })), permission).toBe(
        'markup-out-of-scope',
      );
    }
  });

  it('shows which role kind each row admits in its own column (the table as declared)', () => {
    for (const [permission, own] of EVERY_ROW) {
      const roles = rolesIn(own);
      const rule = PERMISSIONS[permission] as { member: Role; endUser: EndUserRole | false };
      expect(roles[0], permission).toBe(rule.member);
      expect(roles.find((role) => role.startsWith('project:')) ?? false, permission).toBe(rule.endUser);
    }
  });
});
