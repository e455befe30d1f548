import { authorize, requireInScope } from '../../auth/authorize.js';
import type { AnyRole, Permission } from '../../auth/permissions.js';
import { credentialOf, type Principal } from '../../auth/principal.js';
import { getItem, getItems, type MarkupRecord } from '../../db/items.js';
import { getPlan, type Plan } from '../../db/plans.js';
import type { WorkspaceRecord } from '../../db/workspaces.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../http/errors.js';
import { isId } from '../../http/schemas.js';
import { settleItem, settleItems } from '../items/pending-moves.js';

/** A markup as one caller sees it: the record, its live workspace, the caller's role there, the plan. */
export interface MarkupAccess {
  markup: MarkupRecord;
  workspace: WorkspaceRecord;
  role: AnyRole;
  plan: Plan;
}

/** A workspace as one caller acts in it. */
export interface WorkspaceAccess {
  workspace: WorkspaceRecord;
  role: AnyRole;
  plan: Plan;
}

/** Options of the markup loaders: a consistent read (writes), and a permission beyond the route's. */
export interface LoadOptions {
  consistent?: boolean;
  permission?: Permission;
}

/** The caller's role in a workspace, authorized for the route's permission, with the plan. */
export async function workspaceAccess(
  principal: Principal,
  workspace: WorkspaceRecord,
  options: LoadOptions & { markupId?: string } = {},
): Promise<WorkspaceAccess> {
  const [role, plan] = await Promise.all([authorize(principal, workspace, options), getPlan(workspace.organizationId)]);
  return { workspace, role, plan };
}

const markupNotFound = (markupId: string) => new NotFoundError(`Markup ${markupId} does not exist.`);

/**
 * The live workspace of a markup within the caller's reach, as the items routes check it: a markup
 * of another workspace than a workspace key's, or of another organization, is a 403 (the rule
 * `resolveWorkspace` applies to a named workspace); one of a deleted workspace is a 404.
 */
async function reachableWorkspaceOf(principal: Principal, read: MarkupRecord): Promise<{ markup: MarkupRecord; workspace: WorkspaceRecord }> {
  if (read.organizationId !== principal.organizationId) requireInScope(principal, { id: read.workspaceId, organizationId: read.organizationId }, `Markup ${read.id}`);
  // A markup under a folder moved into another workspace is in the destination from the move's response on.
  const settled = await settleItem(read);
  if (!settled) throw markupNotFound(read.id);
  const { item: markup, workspace } = settled;
  requireInScope(principal, { id: markup.workspaceId, organizationId: markup.organizationId }, `Markup ${markup.id}`);
  if (!workspace) throw markupNotFound(markup.id);
  return { markup, workspace };
}

async function markupItem(markupId: string, consistent: boolean): Promise<MarkupRecord> {
  const item = await getItem(markupId, consistent);
  if (!item || item.kind !== 'markup') throw markupNotFound(markupId);
  return item;
}

/**
 * The markup with the caller's role and plan, authorized for the route's permission; 404 for
 * unknown ids and folder ids, 403 outside the key's workspace or below the permission's role.
 */
export async function loadMarkup(principal: Principal, markupId: string, options: LoadOptions = {}): Promise<MarkupAccess> {
  const { markup, workspace } = await reachableWorkspaceOf(principal, await markupItem(markupId, options.consistent ?? false));
  return { markup, ...(await workspaceAccess(principal, workspace, { ...options, markupId: markup.id })) };
}

/** Whether `markupId` names a markup (not a folder, not deleted) of `workspaceId`: what a token may be bound to. */
export async function isMarkupOfWorkspace(markupId: string, workspaceId: string): Promise<boolean> {
  const read = isId(markupId) ? await getItem(markupId) : undefined;
  if (read?.kind !== 'markup') return false;
  // One of another workspace may lie under a folder moved into this one.
  const item = read.workspaceId === workspaceId ? read : (await settleItem(read))?.item;
  return item?.workspaceId === workspaceId;
}

/** A markup as one caller sees it, without the plan: what comment operations need. */
export type MarkupRoleAccess = Omit<MarkupAccess, 'plan'>;

/** `loadMarkup` for operations that never look at the plan (threads, messages): one read fewer. */
export async function loadMarkupRole(principal: Principal, markupId: string, consistent = false): Promise<MarkupRoleAccess> {
  return roleAccessFor(principal, await markupItem(markupId, consistent));
}

/** The caller's authorized role on a markup already read, without the plan; 403 outside the key's reach, 404 in a deleted workspace. */
export async function roleAccessFor(principal: Principal, read: MarkupRecord): Promise<MarkupRoleAccess> {
  const { markup, workspace } = await reachableWorkspaceOf(principal, read);
  return { markup, workspace, role: await authorize(principal, workspace, { markupId: markup.id }) };
}

/**
 * Every listed markup, or (nothing changed) a 404 naming the ids that are not markups and a 403 for
 * one outside the key's organization. The caller authorizes each workspace (`roleAccessFor`).
 */
export async function loadMarkups(principal: Principal, markupIds: readonly string[]): Promise<MarkupRecord[]> {
  const found = new Map((await getItems([...markupIds])).map((item) => [item.id, item]));
  const missing = markupIds.filter((id) => found.get(id)?.kind !== 'markup');
  if (missing.length > 0) throw new NotFoundError(`These markups do not exist: ${missing.join(', ')}. Nothing was changed.`);
  const read = markupIds.map((id) => found.get(id) as MarkupRecord);
  const foreign = read.find((markup) => markup.organizationId !== principal.organizationId);
  if (foreign) throw new ForbiddenError(`Markup ${foreign.id} is not in this ${credentialOf(principal)}'s organization.`, 'workspace-out-of-scope');
  // Markups under a folder moved into another workspace are in the destination (`settleItems`).
  const { items: markups } = await settleItems(read);
  const gone = markupIds.filter((id) => !markups.some((markup) => markup.id === id));
  if (gone.length > 0) throw new NotFoundError(`These markups do not exist: ${gone.join(', ')}. Nothing was changed.`);
  return markups;
}

/** Rejects the same id listed twice in a batch (each id is one operation of one transaction). */
export function requireDistinct(ids: readonly string[], field: string): void {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw new BadRequestError(`${field} lists ${id} more than once.`, 'duplicate-id');
    seen.add(id);
  }
}
