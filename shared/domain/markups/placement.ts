import type { Principal } from '../../auth/principal.js';
import { getItem, type FolderRecord } from '../../db/items.js';
import { BadRequestError } from '../../errors.js';
import { loadFolderForCaller, type ItemAccess } from '../items/access.js';
import { resolveWorkspace } from '../workspaces/scope.js';
import { workspaceAccess, type WorkspaceAccess } from './access.js';

/**
 * A folder that markups may be put into, with the rules of the items routes (`loadFolderForCaller`):
 * unknown ids and markup ids are 404s, folders outside the key's scope 403s. New markups may not
 * be created in the workspace archive (400: archiving has its own operation, PATCH /items/archive);
 * moves may go there, as item moves may.
 */
export async function loadTargetFolder(
  principal: Principal,
  folderId: string,
  field: string,
  options: { allowArchive: boolean },
): Promise<ItemAccess<FolderRecord>> {
  const access = await loadFolderForCaller(principal, folderId, { consistent: true });
  const archiveId = access.workspace.archiveFolderId;
  if (!options.allowArchive && (access.item.id === archiveId || access.item.ancestorIds[0] === archiveId)) {
    throw new BadRequestError(
      `${field} ${folderId} is in the workspace archive; create the markup elsewhere and archive it with PATCH /items/archive.`,
      'folder-archived',
    );
  }
  return access;
}

export interface Placement extends WorkspaceAccess {
  parent: FolderRecord;
}

/**
 * Where a new markup goes. `workspaceId` names the workspace (default: a workspace key's own, an
 * organization key's default workspace); without it, a `parentFolderId` names the workspace by
 * the folder it is in. Authentication rule 4: a workspace other than the key's is a 403.
 * `workspaceRequired` (operations whose `workspaceId` the spec marks required): a workspace key may
 * still leave it out, but an organization key must name it (400), as DESIGN.md says.
 */
export async function resolvePlacement(
  principal: Principal,
  input: { workspaceId?: string; parentFolderId?: string },
  options: { workspaceRequired?: boolean } = {},
): Promise<Placement> {
  let parent = input.parentFolderId
    ? (await loadTargetFolder(principal, input.parentFolderId, 'parentFolderId', { allowArchive: false })).item
    : undefined;
  const workspace = options.workspaceRequired
    ? await resolveWorkspace(principal, input.workspaceId)
    : await resolveWorkspace(principal, input.workspaceId ?? parent?.workspaceId, { useDefault: true });
  if (parent && parent.workspaceId !== workspace.id) {
    throw new BadRequestError(`parentFolderId ${parent.id} is not a folder of workspace ${workspace.id}.`, 'folder-in-another-workspace');
  }
  const [root, access] = await Promise.all([parent ? undefined : getItem(workspace.rootFolderId), workspaceAccess(principal, workspace)]);
  if (!parent) {
    if (!root || root.kind !== 'folder') throw new Error(`Workspace ${workspace.id} has no root folder ${workspace.rootFolderId}.`);
    parent = root;
  }
  return { ...access, parent };
}

/** Resolves each input's placement, looking up each distinct (workspace, folder) pair once. */
export async function resolvePlacements(
  principal: Principal,
  inputs: readonly { workspaceId?: string; parentFolderId?: string }[],
): Promise<Placement[]> {
  const memo = new Map<string, Promise<Placement>>();
  return Promise.all(
    inputs.map((input) => {
      const key = `${input.workspaceId ?? ''}/${input.parentFolderId ?? ''}`;
      let placement = memo.get(key);
      if (!placement) {
        placement = resolvePlacement(principal, input);
        memo.set(key, placement);
      }
      return placement;
    }),
  );
}
