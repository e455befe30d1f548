import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import {
  allows,
  describePermission,
  END_USER_ROLE_ORDER,
  PERMISSIONS,
  refusalOf,
  WORKSPACE_ROLE_ORDER,
  type AnyRole,
  type Permission,
} from '../../shared/auth/permissions.js';
import { RESOURCE_RULES } from '../../shared/domain/upload-rules.js';
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
              if (allows(lower, permission, on)) expect(allows(higher, permission, on), `${permission} ${on}: ${lower} < ${higher}`).toBe(true);
            }
          });
        }
      }
    }
  });

  it("never asks less on other people's records than on one's own", () => {
    for (const permission of permissions) {
      for (const role of allRoles) if (allows(role, permission, 'others')) expect(allows(role, permission, 'own'), `${permission} ${role}`).toBe(true);
    }
  });

  it('keeps end users out of organization and workspace administration', () => {
    const administration = permissions.filter((permission) => /^(workspace|storage|item|original|user|external-user):/.test(permission));

    for (const permission of administration) expect(allowedRoles(permission).filter((role) => role.startsWith('project:')), permission).toEqual([]);
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
    const used = new Set<string | undefined>([...routes.map((route) => route.permission), ...Object.values(RESOURCE_RULES).map((rule) => rule.permission)]);

    expect(permissions.filter((permission) => !used.has(permission))).toEqual([]);
  });

  it('shows each operation\'s permission and minimum role in the OpenAPI document', () => {
    const document = buildOpenApi(routes) as { paths: Record<string, Record<string, Record<string, unknown>>> };

    for (const route of routes.filter((candidate) => candidate.permission)) {
      const operation = document.paths[route.path]![route.method.toLowerCase()]!;
      expect(operation['x-permission']).toBe(route.permission);
      expect(operation['x-minimum-role']).toBe(PERMISSIONS[route.permission!].member);
      expect(operation.description).toContain(describePermission(route.permission!));
    }
  });
});
