import { authorize, authorizeMember, inScope, requireInScope } from '../../auth/authorize.js';
import type { Permission } from '../../auth/permissions.js';
import { credentialOf, type Principal } from '../../auth/principal.js';
import { getOrganization } from '../../db/organizations.js';
import type { Role } from '../../db/users.js';
import { getWorkspace, type WorkspaceRecord } from '../../db/workspaces.js';
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../errors.js';

/** Picks the one workspaceId of a request that may carry it in the query and in the body. */
export function pickWorkspaceId(...candidates: (string | undefined)[]): string | undefined {
  const given = [...new Set(candidates.filter((id): id is string => id !== undefined))];
  if (given.length > 1) throw new BadRequestError('workspaceId differs between the query and the body.');
  return given[0];
}

/**
 * The workspace a request acts on, authorized for the route's permission (and `permission`, when
 * given). A workspace key acts on its own workspace and may name no other (403). An organization
 * key names one with `workspaceId`; where `useDefault` is set, one that names none acts on the
 * organization's default workspace.
 */
export async function resolveWorkspace(
  principal: Principal,
  requestedId: string | undefined,
  options: { useDefault?: boolean; permission?: Permission } = {},
): Promise<WorkspaceRecord> {
  const workspace = await findWorkspace(principal, requestedId, options.useDefault ?? false);
  await authorize(principal, workspace, { permission: options.permission });
  return workspace;
}

/**
 * `resolveWorkspace` for the administration of a workspace's members (permissions the table closes
 * to end users): the workspace and the caller's workspace role there (`authorizeMember`), which
 * decides what roles the caller may give or take.
 */
export async function resolveWorkspaceForMember(
  principal: Principal,
  requestedId: string | undefined,
): Promise<{ workspace: WorkspaceRecord; role: Role }> {
  const workspace = await findWorkspace(principal, requestedId, false);
  return { workspace, role: await authorizeMember(principal, workspace) };
}

async function findWorkspace(principal: Principal, requestedId: string | undefined, useDefault: boolean): Promise<WorkspaceRecord> {
  if (principal.scope === 'workspace') {
    // The workspace a workspace key names lies in its organization: only the workspace can differ.
    if (requestedId !== undefined && !inScope(principal, { id: requestedId, organizationId: principal.organizationId })) {
      throw new ForbiddenError(
        `This ${credentialOf(principal)} is scoped to workspace ${principal.workspaceId} and cannot act on workspace ${requestedId}.`,
        'workspace-out-of-scope',
      );
    }
    // Consistent: a move out of the workspace (`movesOut`) shows in its lists from the move's answer on.
    const own = await getWorkspace(principal.workspaceId, true);
    if (!own) throw new UnauthorizedError(`The ${credentialOf(principal)} belongs to a workspace that has been deleted.`);
    return own;
  }
  let workspaceId = requestedId;
  if (workspaceId === undefined && principal.kind === 'session') {
    throw new BadRequestError(
      'workspaceId is required with a session token: name the workspace (one the signed-in member belongs to).',
      'workspace-id-required',
    );
  }
  if (workspaceId === undefined && useDefault && principal.organizationId !== undefined) {
    workspaceId = (await getOrganization(principal.organizationId))?.defaultWorkspaceId ?? undefined;
  }
  if (workspaceId === undefined) {
    throw new BadRequestError('workspaceId is required with an organization-scoped API key.', 'workspace-id-required');
  }
  const workspace = await getWorkspace(workspaceId, true);
  if (!workspace) throw new NotFoundError(`Workspace ${workspaceId} does not exist.`);
  // Another organization's workspace: a 403 naming the workspace as the caller named it.
  requireInScope(principal, workspace, `Workspace ${workspaceId}`);
  return workspace;
}
