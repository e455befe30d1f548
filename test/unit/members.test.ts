import { describe, expect, it } from 'vitest';
import { ROLES, type Role } from '../../shared/db/users.js';
import { requireMayAssign } from '../../shared/domain/organizations/members.js';
import { ForbiddenError } from '../../shared/errors.js';

const refusal = (callerRole: Role, current: Role | undefined, next: Role | undefined): string | undefined => {
  try {
    requireMayAssign(callerRole, current, next);
    return undefined;
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return error.slug;
  }
};

describe("who may give which role (issue 11 item 7: owner stays in owners' hands)", () => {
  it('lets an owner give and take away every role', () => {
    for (const current of [undefined, ...ROLES])
      for (const next of ROLES) expect(refusal('owner', current, next), `${current} -> ${next}`).toBeUndefined();
  });

  it('lets an admin give admin, contributor and viewer to anyone but an owner', () => {
    for (const current of [undefined, 'admin', 'contributor', 'viewer'] as const) {
      for (const next of ['admin', 'contributor', 'viewer'] as const)
        expect(refusal('admin', current, next), `${current} -> ${next}`).toBeUndefined();
    }
  });

  it('refuses an admin granting owner (role-above-caller) or changing or removing an owner (owner-required)', () => {
    expect(refusal('admin', 'viewer', 'owner')).toBe('role-above-caller');
    expect(refusal('admin', undefined, 'owner')).toBe('role-above-caller');
    expect(refusal('admin', 'owner', 'viewer')).toBe('owner-required');
    expect(refusal('admin', 'owner', undefined)).toBe('owner-required');
  });
});
