import { describe, expect, it } from 'vitest';
import { inScope, requireInScope } from '../../shared/auth/authorize.js';
import type { Principal } from '../../shared/auth/principal.js';

const organizationKey: Principal = {
  kind: 'apiKey',
  scope: 'organization',
  keyId: 'k1',
  organizationId: 'o1',
  userId: 'u1',
  actsAsMember: false,
};
const workspaceKey: Principal = {
  kind: 'apiKey',
  scope: 'workspace',
  keyId: 'k2',
  organizationId: 'o1',
  workspaceId: 'w1',
  userId: 'u2',
  actsAsMember: false,
};
const endUser: Principal = {
  kind: 'endUser',
  scope: 'workspace',
  organizationId: 'o1',
  workspaceId: 'w1',
  userId: 'u3',
  externalId: 'e1',
  installationId: 'i1',
  markupRole: 'project:viewer',
  actsAsMember: false,
};
const session: Principal = { kind: 'session', scope: 'member', userId: 'u4', sessionId: 's1', expiresAt: 0, actsAsMember: true };

describe('the scope rule (Authentication: a key acts within its organization, a workspace key within its workspace)', () => {
  it('lets an organization key reach every workspace of its organization and none of another', () => {
    expect(inScope(organizationKey, { id: 'w9', organizationId: 'o1' })).toBe(true);
    expect(inScope(organizationKey, { id: 'w9', organizationId: 'o2' })).toBe(false);
  });

  it('lets a workspace key and an exchange token reach their own workspace only', () => {
    for (const principal of [workspaceKey, endUser]) {
      expect(inScope(principal, { id: 'w1', organizationId: 'o1' })).toBe(true);
      expect(inScope(principal, { id: 'w2', organizationId: 'o1' })).toBe(false);
      expect(inScope(principal, { id: 'w1', organizationId: 'o2' })).toBe(false);
    }
  });

  it('leaves a session to its memberships, in any organization', () => {
    expect(inScope(session, { id: 'w9', organizationId: 'o2' })).toBe(true);
  });

  it('refuses with requireInScope exactly where inScope says no, naming what the caller addressed', () => {
    expect(() => requireInScope(workspaceKey, { id: 'w1', organizationId: 'o1' })).not.toThrow();
    expect(() => requireInScope(workspaceKey, { id: 'w2', organizationId: 'o1' }, 'Markup m1')).toThrow(
      expect.objectContaining({
        status: 403,
        message: 'This API key is scoped to workspace w1 and cannot act on markup m1, which is in another workspace.',
      }),
    );
    expect(() => requireInScope(organizationKey, { id: 'w9', organizationId: 'o2' }, 'Markup m1')).toThrow(
      expect.objectContaining({ status: 403 }),
    );
  });
});
