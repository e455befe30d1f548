import type { Principal } from '../auth/principal.js';
import { getMember, type Role } from '../db/users.js';

/**
 * The role a caller acts with in a workspace. Organization keys act as owners; a workspace key's own
 * API user acts as an admin; a key made for a member acts with that member's current role.
 */
export async function roleOf(principal: Principal, workspaceId: string): Promise<Role> {
  if (principal.scope === 'organization') return 'owner';
  const member = await getMember(workspaceId, principal.userId);
  return member?.role ?? 'admin';
}

const RANK: Record<Role, number> = { viewer: 0, contributor: 1, admin: 2, owner: 3 };

export function atLeast(role: Role, minimum: Role): boolean {
  return RANK[role] >= RANK[minimum];
}
