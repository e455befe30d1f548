import { authorize, requireInScope } from '../../auth/authorize.js';
import type { AnyRole, Permission } from '../../auth/permissions.js';
import type { Principal } from '../../auth/principal.js';
import { livenessToCarry } from '../../auth/liveness.js';
import { readWithExchangeGrant } from '../../db/exchange-grants.js';
import { fromItem, getItem, getItems, itemKey, type ItemRecord, type MarkupRecord } from '../../db/items.js';
import { getPlan, type Plan } from '../../db/plans.js';
import { getWorkspace, type WorkspaceRecord } from '../../db/workspaces.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { isId } from '../../schemas/builders.js';
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

const workspaceRefOf = (markup: MarkupRecord) => ({ id: markup.workspaceId, organizationId: markup.organizationId });

/** Options of the markup loaders: a consistent read (writes), and a permission beyond the route's. */
export interface LoadOptions {
  consistent?: boolean;
  permission?: Permission;
}

/**
 * Options of `loadMarkup`: `subject` is what the caller named when it reached the markup through
 * something else (`Thread <id>`), for refusals, which then never name the markup; `plan: false`
 * for operations that never look at the plan (threads, messages), one read fewer.
 */
export interface LoadMarkupOptions extends LoadOptions {
  subject?: string;
  plan?: boolean;
}

/** The caller's role in a workspace, authorized for the route's permission, with the plan. */
export async function workspaceAccess(
  principal: Principal,
  workspace: WorkspaceRecord,
  options: LoadOptions & { markupId?: string; subject?: string } = {},
): Promise<WorkspaceAccess> {
  const [role, plan] = await Promise.all([authorize(principal, workspace, options), getPlan(workspace.organizationId)]);
  return { workspace, role, plan };
}

/**
 * The live workspace of a markup within the caller's reach, as the items routes check it: a markup
 * of another workspace than a workspace key's, or of another organization, is a 403 (the rule
 * `resolveWorkspace` applies to a named workspace); one of a deleted workspace is a 404. `subject`
 * is what the caller asked for (`Markup <id>`, or the thread or message it reached the markup by);
 * `known`, the workspaces already read (`boundWorkspaceBeside`).
 */
async function reachableWorkspaceOf(
  principal: Principal,
  read: MarkupRecord,
  subject: string,
  known?: ReadonlyMap<string, WorkspaceRecord | undefined>,
): Promise<{ markup: MarkupRecord; workspace: WorkspaceRecord }> {
  if (read.organizationId !== principal.organizationId) requireInScope(principal, workspaceRefOf(read), subject);
  // A markup under a folder moved into another workspace is in the destination from the move's response on.
  const settled = await settleItem(read, known);
  if (!settled) throw new NotFoundError(`${subject} does not exist.`);
  const { item: markup, workspace } = settled;
  requireInScope(principal, workspaceRefOf(markup), subject);
  if (!workspace) throw new NotFoundError(`${subject} does not exist.`);
  return { markup, workspace };
}

/**
 * The markup, read for `principal`: an end user's first read of its markup also carries its
 * exchange token's liveness check (one consistent BatchGetItem, `livenessToCarry`), so the check
 * costs no call of its own.
 */
async function markupItem(
  principal: Principal,
  markupId: string,
  consistent: boolean,
  subject = `Markup ${markupId}`,
): Promise<MarkupRecord> {
  const carried = livenessToCarry(principal);
  let item: ItemRecord | undefined;
  if (carried) {
    const read = await readWithExchangeGrant(itemKey(markupId), carried.grant);
    carried.settle(read.alive);
    item = read.item ? fromItem(read.item) : undefined;
  } else {
    item = await getItem(markupId, consistent);
  }
  if (!item || item.kind !== 'markup') throw new NotFoundError(`${subject} does not exist.`);
  return item;
}

/**
 * `read` beside a consistent read of the workspace a workspace key or an end user is bound to: the
 * workspace of every markup such a caller may reach but one under a folder moved in from elsewhere,
 * so authorizing it takes no round trip after the markup's. The workspace read is as fresh as the
 * one `settleItems` would make after the markup's (both answer as of some moment of the request).
 */
async function boundWorkspaceBeside<T>(
  principal: Principal,
  read: Promise<T>,
): Promise<{ read: T; known?: ReadonlyMap<string, WorkspaceRecord | undefined> }> {
  const bound = principal.workspaceId;
  if (bound === undefined) return { read: await read };
  const [item, workspace] = await Promise.all([read, getWorkspace(bound, true)]);
  return { read: item, known: new Map([[bound, workspace]]) };
}

/**
 * THE access path of a markup (and of what lies on it: threads, messages): the markup with the
 * caller's role and plan, authorized for the route's permission; 404 for unknown ids and folder
 * ids, 403 outside the key's workspace or below the permission's role.
 */
export async function loadMarkup(
  principal: Principal,
  markupId: string,
  options: LoadMarkupOptions & { plan: false },
): Promise<MarkupRoleAccess>;
export async function loadMarkup(principal: Principal, markupId: string, options?: LoadMarkupOptions): Promise<MarkupAccess>;
export async function loadMarkup(
  principal: Principal,
  markupId: string,
  options: LoadMarkupOptions = {},
): Promise<MarkupAccess | MarkupRoleAccess> {
  const { consistent = false, permission, subject, plan = true } = options;
  const { read, known } = await boundWorkspaceBeside(principal, markupItem(principal, markupId, consistent, subject));
  if (!plan) return roleAccessFor(principal, read, subject, known);
  const { markup, workspace } = await reachableWorkspaceOf(principal, read, subject ?? `Markup ${markupId}`, known);
  return {
    markup,
    ...(await workspaceAccess(principal, workspace, { consistent, permission, markupId: markup.id, ...(subject ? { subject } : {}) })),
  };
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

/**
 * The caller's authorized role on a markup already read, without the plan; 403 outside the key's
 * reach, 404 in a deleted workspace. `subject` is what the caller named when it reached the markup
 * through something else (`Thread <id>`), for refusals, which then never name the markup.
 */
export async function roleAccessFor(
  principal: Principal,
  read: MarkupRecord,
  subject?: string,
  known?: ReadonlyMap<string, WorkspaceRecord | undefined>,
): Promise<MarkupRoleAccess> {
  const { markup, workspace } = await reachableWorkspaceOf(principal, read, subject ?? `Markup ${read.id}`, known);
  return { markup, workspace, role: await authorize(principal, workspace, { markupId: markup.id, ...(subject ? { subject } : {}) }) };
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
  // Only the organization here: a markup of another workspace may have moved into the key's (settled below, authorized by the caller).
  for (const markup of read)
    if (markup.organizationId !== principal.organizationId) requireInScope(principal, workspaceRefOf(markup), `Markup ${markup.id}`);
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
