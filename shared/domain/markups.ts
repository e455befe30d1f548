import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { AGAIN, withBackoff } from '../db/backoff.js';
import { recordEvent } from '../db/events.js';
import { fromItem, getItem, getItems, toItem, workspaceMarkupsPartition, type FolderRecord, type MarkupRecord } from '../db/items.js';
import { applyItemChange, moveMarkupRecords } from '../db/item-writes.js';
import { searchWorkspaceMarkups, type SearchPage } from '../db/markup-search.js';
import { listMarkupTags, listViewModeCounts } from '../db/markup-records.js';
import { setThumbnail } from '../db/thumbnails.js';
import { moveOriginalToWorkspace } from '../db/originals.js';
import { queryPage, queryPrefix, type Page } from '../db/paging.js';
import { DEFAULT_PLAN, getPlan, type Plan } from '../db/plans.js';
import { bestEffort, nextTime, putNew } from '../db/transact.js';
import { getUsage, getUsageHistory, usagePeriod, type UsageCounters, type UsagePeriod } from '../db/usage.js';
import { getUsers, memberKey, type Role } from '../db/users.js';
import { getWorkspace, touchWorkspaceActivity, type WorkspaceRecord } from '../db/workspaces.js';
import { BadRequestError, ConflictError, FeatureNotEnabledError, ForbiddenError, NotFoundError } from '../http/errors.js';
import { enqueueThumbnail } from '../events/jobs.js';
import { logger } from '../logger.js';
import { createWithAllowance } from './allowance.js';
import { deleteItemRecords } from './deletion.js';
import { loadFolderForCaller, type ItemAccess } from './items.js';
import { atLeast, roleOf } from './roles.js';
import { resolveWorkspace } from './scope.js';

// ---------------------------------------------------------------------------------------------
// Access: which markup, in which workspace, with which role and plan
// ---------------------------------------------------------------------------------------------

/** A markup as one caller sees it: the record, its live workspace, the caller's role there, the plan. */
export interface MarkupAccess {
  markup: MarkupRecord;
  workspace: WorkspaceRecord;
  role: Role;
  plan: Plan;
}

/** A workspace as one caller acts in it. */
export interface WorkspaceAccess {
  workspace: WorkspaceRecord;
  role: Role;
  plan: Plan;
}

/** What each role may do to markups; `markupScopes` reports the same rules as `scopes`. */
const REQUIRED_ROLE = {
  view: 'viewer',
  create: 'contributor',
  rename: 'contributor',
  move: 'contributor',
  delete: 'admin',
  setReadOnly: 'admin',
  manageOriginal: 'admin',
} as const satisfies Record<string, Role>;

export type MarkupAction = keyof typeof REQUIRED_ROLE;

const ACTION_WORDS: Record<MarkupAction, string> = {
  view: 'read markups',
  create: 'create markups',
  rename: 'rename markups',
  move: 'move markups',
  delete: 'delete markups',
  setReadOnly: 'pause or resume comments on markups',
  manageOriginal: "keep or archive markups' original files",
};

export function requireRole(role: Role, action: MarkupAction): void {
  if (!atLeast(role, REQUIRED_ROLE[action])) {
    throw new ForbiddenError(`The ${role} role cannot ${ACTION_WORDS[action]}; it needs ${REQUIRED_ROLE[action]} or above.`, 'insufficient-role');
  }
}

export async function workspaceAccess(principal: Principal, workspace: WorkspaceRecord): Promise<WorkspaceAccess> {
  const [role, plan] = await Promise.all([roleOf(principal, workspace.id), getPlan(workspace.organizationId)]);
  return { workspace, role, plan };
}

const markupNotFound = (markupId: string) => new NotFoundError(`Markup ${markupId} does not exist.`);

/**
 * The live workspace of a markup within the caller's reach, as the items routes check it: a markup
 * of another workspace than a workspace key's, or of another organization, is a 403 (the rule
 * `resolveWorkspace` applies to a named workspace); one of a deleted workspace is a 404.
 */
async function reachableWorkspaceOf(principal: Principal, markup: MarkupRecord): Promise<WorkspaceRecord> {
  if (markup.organizationId !== principal.organizationId) {
    throw new ForbiddenError(`Markup ${markup.id} is not in this API key's organization.`, 'workspace-out-of-scope');
  }
  if (principal.scope === 'workspace' && markup.workspaceId !== principal.workspaceId) {
    throw new ForbiddenError(`Markup ${markup.id} belongs to another workspace than this API key's.`, 'workspace-out-of-scope');
  }
  const workspace = await getWorkspace(markup.workspaceId);
  if (!workspace) throw markupNotFound(markup.id);
  return workspace;
}

async function markupItem(markupId: string, consistent: boolean): Promise<MarkupRecord> {
  const item = await getItem(markupId, consistent);
  if (!item || item.kind !== 'markup') throw markupNotFound(markupId);
  return item;
}

/** The markup with the caller's role and plan; 404 for unknown ids and folder ids, 403 outside the key's workspace. */
export async function loadMarkup(principal: Principal, markupId: string, action: MarkupAction = 'view', consistent = false): Promise<MarkupAccess> {
  const markup = await markupItem(markupId, consistent);
  const access = { markup, ...(await workspaceAccess(principal, await reachableWorkspaceOf(principal, markup))) };
  requireRole(access.role, action);
  return access;
}

/** A markup as one caller sees it, without the plan: what comment operations need. */
export type MarkupRoleAccess = Omit<MarkupAccess, 'plan'>;

/** `loadMarkup` for operations that never look at the plan (threads, messages): one read fewer. */
export async function loadMarkupRole(principal: Principal, markupId: string, consistent = false): Promise<MarkupRoleAccess> {
  return roleAccessFor(principal, await markupItem(markupId, consistent));
}

async function roleAccessFor(principal: Principal, markup: MarkupRecord): Promise<MarkupRoleAccess> {
  const workspace = await reachableWorkspaceOf(principal, markup);
  return { markup, workspace, role: await roleOf(principal, workspace.id) };
}

/**
 * Every listed markup, or (nothing changed) a 404 naming the ids that are not markups and a 403 for
 * one outside the key's organization.
 */
async function loadMarkups(principal: Principal, markupIds: readonly string[]): Promise<MarkupRecord[]> {
  const found = new Map((await getItems([...markupIds])).map((item) => [item.id, item]));
  const missing = markupIds.filter((id) => found.get(id)?.kind !== 'markup');
  if (missing.length > 0) throw new NotFoundError(`These markups do not exist: ${missing.join(', ')}. Nothing was changed.`);
  const markups = markupIds.map((id) => found.get(id) as MarkupRecord);
  const foreign = markups.find((markup) => markup.organizationId !== principal.organizationId);
  if (foreign) throw new ForbiddenError(`Markup ${foreign.id} is not in this API key's organization.`, 'workspace-out-of-scope');
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

// ---------------------------------------------------------------------------------------------
// Placement: the folder a new or moved markup goes into
// ---------------------------------------------------------------------------------------------

/**
 * A folder that markups may be put into, with the rules of the items routes (`loadFolderForCaller`):
 * unknown ids and markup ids are 404s, folders outside the key's scope 403s. New markups may not
 * be created in the workspace archive (400: archiving has its own operation, PATCH /items/archive);
 * moves may go there, as item moves may.
 */
async function loadTargetFolder(principal: Principal, folderId: string, field: string, options: { allowArchive: boolean }): Promise<ItemAccess<FolderRecord>> {
  const access = await loadFolderForCaller(principal, folderId, { consistent: true });
  const archiveId = access.workspace.archiveFolderId;
  if (!options.allowArchive && (access.item.id === archiveId || access.item.ancestorIds[0] === archiveId)) {
    throw new BadRequestError(`${field} ${folderId} is in the workspace archive; create the markup elsewhere and archive it with PATCH /items/archive.`, 'folder-archived');
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
 */
export async function resolvePlacement(principal: Principal, input: { workspaceId?: string; parentFolderId?: string }): Promise<Placement> {
  let parent = input.parentFolderId ? (await loadTargetFolder(principal, input.parentFolderId, 'parentFolderId', { allowArchive: false })).item : undefined;
  const workspace = await resolveWorkspace(principal, input.workspaceId ?? parent?.workspaceId, { useDefault: true });
  if (parent && parent.workspaceId !== workspace.id) {
    throw new BadRequestError(`parentFolderId ${parent.id} is not a folder of workspace ${workspace.id}.`, 'folder-in-another-workspace');
  }
  const [root, access] = await Promise.all([parent ? undefined : getItem(workspace.rootFolderId), workspaceAccess(principal, workspace)]);
  if (!parent) {
    if (!root || root.kind !== 'folder') throw new Error(`Workspace ${workspace.id} has no root folder ${workspace.rootFolderId}.`);
    parent = root;
  }
  requireRole(access.role, 'create');
  return { ...access, parent };
}

// ---------------------------------------------------------------------------------------------
// Creation from a URL
// ---------------------------------------------------------------------------------------------

/** Extensions of the file types the service turns into markups (Markups rules 3 and 4). */
const FILE_EXTENSIONS: Record<string, 'image' | 'pdf' | 'video' | 'convertible-image'> = {
  png: 'image', jpg: 'image', jpeg: 'image', gif: 'image', bmp: 'image', webp: 'image', svg: 'image',
  pdf: 'pdf',
  mp4: 'video', mov: 'video', webm: 'video', avi: 'video', wmv: 'video', mkv: 'video', mxf: 'video',
  tif: 'convertible-image', tiff: 'convertible-image', psd: 'convertible-image', eps: 'convertible-image',
};

/**
 * The supported file type a URL points at, judged by the extension of its path, or undefined for
 * a webpage. Markups rule 1 accepts both; until fetching remote files lands, a file URL also
 * becomes a webpage markup showing that address, which is what a browser would show.
 */
export function fileTypeOfUrl(url: string): (typeof FILE_EXTENSIONS)[string] | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  return extension ? FILE_EXTENSIONS[extension] : undefined;
}

/** The default markup name of a URL: its hostname (Markups table, POST /markups/url). */
export function defaultNameOf(url: string): string {
  return new URL(url).hostname || url;
}

export interface UrlMarkupInput {
  url: string;
  name?: string;
  workspaceId?: string;
  parentFolderId?: string;
}

export function newWebpageMarkupRecord(fields: {
  placement: Pick<Placement, 'workspace' | 'parent'>;
  url: string;
  name?: string;
  createdBy: string;
  at: number;
  id?: string;
}): MarkupRecord {
  return {
    ...markupBase({ placement: fields.placement, name: fields.name ?? defaultNameOf(fields.url), createdBy: fields.createdBy, at: fields.at, id: fields.id }),
    type: 'webpage',
    url: fields.url,
    // A webpage needs no conversion; its thumbnail is rendered later by the thumbnail job.
    isReady: true,
    thumbnailState: 'pending',
  };
}

/** The fields every new markup starts with, whatever it is made from. */
export function markupBase(fields: {
  placement: Pick<Placement, 'workspace' | 'parent'>;
  name: string;
  createdBy: string;
  at: number;
  id?: string;
}): Omit<MarkupRecord, 'type' | 'isReady' | 'thumbnailState'> {
  const { workspace, parent } = fields.placement;
  return {
    kind: 'markup',
    id: fields.id ?? randomUUID(),
    workspaceId: workspace.id,
    organizationId: workspace.organizationId,
    parentFolderId: parent.id,
    name: fields.name,
    createdAt: fields.at,
    modifiedAt: fields.at,
    activityAt: fields.at,
    readOnly: false,
    status: 'editing',
    note: { id: randomUUID(), note: '', showNoteOnProjectOpen: false },
    retainOriginal: false,
    hasRetainedOriginal: false,
    activeThreads: 0,
    createdBy: fields.createdBy,
  };
}

/**
 * Creates one webpage markup per input, all in one workspace, in ONE transaction with the usage
 * charge: either every markup exists and is counted, or (402, 409) nothing was written. Inputs get
 * consecutive creation times, so the newest-first list shows a batch in reverse input order.
 */
export async function createUrlMarkups(principal: Principal, inputs: readonly UrlMarkupInput[]): Promise<{ records: MarkupRecord[]; access: WorkspaceAccess }> {
  const placements = await resolvePlacements(principal, inputs);
  const first = placements[0];
  if (!first) throw new BadRequestError('At least one markup is needed.');
  if (placements.some((placement) => placement.workspace.id !== first.workspace.id)) {
    throw new BadRequestError('All markups of one request must be created in the same workspace.', 'several-workspaces');
  }
  const at = Date.now();
  const records = inputs.map((input, index) =>
    newWebpageMarkupRecord({ placement: placements[index]!, url: input.url, name: input.name, createdBy: principal.userId, at: at + index }),
  );
  await createWithAllowance(
    first.workspace.id,
    first.workspace.organizationId,
    records.length,
    records.map((record) => putNew(toItem(record))),
    { plan: first.plan },
  );
  await Promise.all([
    ...records.map(scheduleThumbnail),
    ...records.map((record) => recordMarkupCreated(record)),
    recordActivity(first.workspace.id, [...new Map(placements.map((placement) => [placement.parent.id, placement.parent])).values()], at),
  ]);
  return { records, access: first };
}

/**
 * Asks the thumbnail renderer for a picture of the page. The markup exists already; if the job
 * cannot even be queued, the thumbnail is marked unavailable so it never stays `pending`.
 */
async function scheduleThumbnail(record: MarkupRecord): Promise<void> {
  try {
    await enqueueThumbnail({ type: 'render-thumbnail', markupId: record.id });
  } catch (error) {
    logger.error('thumbnail not scheduled', { markupId: record.id, error });
    await bestEffort('thumbnail state', () => setThumbnail(record.id, { state: 'unavailable', error: 'The thumbnail could not be scheduled.' }));
  }
}

/**
 * Records the `markup_created` event of a new markup (the webhooks outbox). The markup exists
 * already, so a failure is logged rather than failing the request that created it.
 */
export async function recordMarkupCreated(record: MarkupRecord): Promise<void> {
  try {
    await recordEvent({ type: 'markup_created', workspaceId: record.workspaceId, markupId: record.id });
  } catch (error) {
    logger.error('markup_created event not recorded', { markupId: record.id, error });
  }
}

/** Resolves each input's placement, looking up each distinct (workspace, folder) pair once. */
async function resolvePlacements(principal: Principal, inputs: readonly UrlMarkupInput[]): Promise<Placement[]> {
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

// ---------------------------------------------------------------------------------------------
// Changing markups
// ---------------------------------------------------------------------------------------------

/** Reads of a markup (or of markups and a folder) a change retries from before it answers 409. */
const MAX_WRITE_ATTEMPTS = 5;
/** Waits between those reads: up to 20 ms, then 40, 80, … (full jitter). */
const WRITE_RETRY = { attempts: MAX_WRITE_ATTEMPTS, baseMs: 20 };

/**
 * Reads a markup, applies `change` and writes the difference, retrying from a fresh read when a
 * concurrent writer changed the same fields. `change` may throw (authorization, plan rules).
 */
async function changeMarkup(
  principal: Principal,
  markupId: string,
  action: MarkupAction,
  change: (access: MarkupAccess) => MarkupRecord,
): Promise<MarkupAccess> {
  return withBackoff(
    async () => {
      const access = await loadMarkup(principal, markupId, action, true);
      const next = change(access);
      if (!(await applyItemChange(access.markup, next, { unchangedSinceRead: true }))) return AGAIN;
      return next === access.markup ? access : { ...access, markup: next };
    },
    { ...WRITE_RETRY, exhausted: () => new ConflictError(`Markup ${markupId} is being changed by another request; try again.`) },
  );
}

/** Renames a markup; a rename counts as activity of the workspace (it orders the `lastActivity` list). */
export async function renameMarkup(principal: Principal, markupId: string, name: string): Promise<MarkupAccess> {
  const renamed = await changeMarkup(principal, markupId, 'rename', ({ markup }) => {
    if (markup.name === name) return markup;
    const at = nextTime(markup.modifiedAt);
    return { ...markup, name, modifiedAt: at, activityAt: at };
  });
  await bestEffort('workspace activity', () => touchWorkspaceActivity(renamed.workspace.id));
  return renamed;
}

/**
 * States and transitions: pausing comments (`readOnly: true`) needs the plan's
 * `pauseCommentsEnabled` (403 feature-not-enabled otherwise); resuming is always allowed. Setting
 * the state the markup already has changes nothing and succeeds.
 */
export async function setMarkupReadOnly(principal: Principal, markupId: string, readOnly: boolean): Promise<MarkupAccess> {
  let changed = false;
  const access = await changeMarkup(principal, markupId, 'setReadOnly', ({ markup, plan }) => {
    if (readOnly && !plan.pauseCommentsEnabled) {
      throw new FeatureNotEnabledError('pauseComments', "The organization's plan does not include pausing comments (read-only markups).");
    }
    changed = markup.readOnly !== readOnly;
    if (!changed) return markup;
    return { ...markup, readOnly, modifiedAt: nextTime(markup.modifiedAt) };
  });
  // Only a real change is an event (DESIGN.md: set_project_read_only, read-only changed).
  if (changed) await bestEffort('set_project_read_only event', () => recordEvent({ type: 'set_project_read_only', workspaceId: access.markup.workspaceId, markupId }));
  return access;
}

/**
 * Deletes markups, all or nothing as far as checks go: every id must be a markup the caller may
 * delete (admin or above in its workspace) before anything is removed. The records go through
 * `deleteItemRecords`, then what hangs off each markup under `MARKUP#<id>`.
 */
export async function deleteMarkups(principal: Principal, markupIds: readonly string[]): Promise<void> {
  requireDistinct(markupIds, 'markupIds');
  const markups = await loadMarkups(principal, markupIds);
  const workspaceIds = [...new Set(markups.map((markup) => markup.workspaceId))];
  await Promise.all(
    workspaceIds.map(async (workspaceId) => {
      const sample = markups.find((markup) => markup.workspaceId === workspaceId)!;
      const access = await roleAccessFor(principal, sample);
      requireRole(access.role, 'delete');
    }),
  );
  await deleteItemRecords(markups);
  const at = new Date().toISOString();
  await Promise.all(workspaceIds.map((workspaceId) => bestEffort('workspace activity', () => touchWorkspaceActivity(workspaceId, at))));
}

/**
 * Moves markups into `targetFolderId`, all or nothing, in one transaction (Move rules 1 and 2):
 * every source must be a markup of one workspace (400 otherwise); a workspace key moves only
 * within its workspace; an organization key may move into another workspace of its organization.
 * The caller needs contributor or above in the source and the destination workspace.
 */
export async function moveMarkups(principal: Principal, markupIds: readonly string[], targetFolderId: string): Promise<void> {
  requireDistinct(markupIds, 'markupIds');
  const moved = await withBackoff(
    async () => {
      const markups = await loadMarkups(principal, markupIds);
      const sourceWorkspaceId = markups[0]!.workspaceId;
      if (markups.some((markup) => markup.workspaceId !== sourceWorkspaceId)) {
        throw new BadRequestError('All markups of one move must belong to the same workspace.', 'sources-span-workspaces');
      }
      const source = await roleAccessFor(principal, markups[0]!);
      requireRole(source.role, 'move');
      // Move rule 1 comes with the folder's scope check: a workspace key reaches no other workspace's folder (403).
      const { item: target, role: targetRole } = await loadTargetFolder(principal, targetFolderId, 'targetFolderId', { allowArchive: true });
      requireRole(targetRole, 'move');

      const at = Date.now();
      const moves = markups.flatMap((markup) => {
        if (markup.parentFolderId === target.id) return [];
        const time = Math.max(at, markup.modifiedAt + 1);
        const next: MarkupRecord = { ...markup, parentFolderId: target.id, workspaceId: target.workspaceId, modifiedAt: time, activityAt: time };
        return [{ current: markup, next }];
      });
      if (moves.length === 0) return undefined;
      // The destination must still be the same live folder when the markups land in it.
      if (!(await moveMarkupRecords(moves, target))) return AGAIN;
      return { markups, sourceWorkspaceId, target, at };
    },
    { ...WRITE_RETRY, exhausted: () => new ConflictError('The markups or the folder are being changed by another request; try again.') },
  );
  if (!moved) return;
  const { markups, sourceWorkspaceId, target, at } = moved;
  if (target.workspaceId !== sourceWorkspaceId) {
    // A retained original belongs to its markup's workspace, so it follows the markup.
    for (const markup of markups.filter((candidate) => candidate.hasRetainedOriginal)) await moveOriginalToWorkspace(markup.id, target.workspaceId);
  }
  await recordActivity(target.workspaceId, [target], at);
  if (target.workspaceId !== sourceWorkspaceId) await bestEffort('workspace activity', () => touchWorkspaceActivity(sourceWorkspaceId));
}

// ---------------------------------------------------------------------------------------------
// Activity
// ---------------------------------------------------------------------------------------------

/** Moves a folder's `activityAt` forward (never back) with its activity index key. */
export async function touchFolderActivity(folder: FolderRecord, at: number): Promise<void> {
  if (folder.activityAt >= at) return;
  // A lost race (the folder changed since it was read) leaves the newer activity in place.
  await applyItemChange(folder, { ...folder, activityAt: at }, { unchangedSinceRead: true });
}

/** After a creation or move: the folders that received markups and the workspace show activity. */
export async function recordActivity(workspaceId: string, folders: readonly FolderRecord[], at: number): Promise<void> {
  await Promise.all([
    ...folders.map((folder) => bestEffort('folder activity', () => touchFolderActivity(folder, at))),
    bestEffort('workspace activity', () => touchWorkspaceActivity(workspaceId, new Date(at).toISOString())),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Listing and searching
// ---------------------------------------------------------------------------------------------

/** GET /markups: a workspace's markups, newest first (GSI4), with `before`/`since` cursors. */
export async function listMarkups(
  workspaceId: string,
  options: { limit: number; before?: string; since?: string },
): Promise<Page<MarkupRecord>> {
  return queryPage(
    {
      list: 'markups:created:desc',
      index: 'GSI4',
      partitionValue: workspaceMarkupsPartition(workspaceId),
      ascending: false,
      limit: options.limit,
      before: options.before,
      since: options.since,
    },
    (item) => fromItem(item) as MarkupRecord,
  );
}

/**
 * GET /markups/search: markups of the workspace, in every folder, whose name or URL contains `text`
 * (case-insensitive), newest first, read from the workspace's markup index with a read budget per
 * request (`searchWorkspaceMarkups`).
 */
export function searchMarkups(workspaceId: string, options: { text: string; limit: number; before?: string }): Promise<SearchPage> {
  return searchWorkspaceMarkups(workspaceId, options);
}

// ---------------------------------------------------------------------------------------------
// Usage
// ---------------------------------------------------------------------------------------------

/** Fraction of the monthly allowance at which usage reports a warning. */
export const WARNING_THRESHOLD = 0.8;

export interface MarkupUsage {
  scope: 'Workspace';
  used: number;
  bundleUsed: number;
  limit: number | null;
  remaining: number | null;
  totalRemaining: number | null;
  isUnlimited: boolean;
  enforcementEnabled: boolean;
  isCustomOverride: boolean;
  warningThreshold: number;
  isWarning: boolean;
  isLimitReached: boolean;
  bundleBalance: number;
  isDrawingOnBundle: boolean;
  averageMonthlyUsage: number | null;
  periodStart: string;
  periodEnd: string;
}

/**
 * The Markup usage resource from a plan and a workspace's counters. `periodEnd` is exclusive (the
 * first instant of the next month). `averageMonthlyUsage` is the mean total (`used + bundleUsed`)
 * of the earlier months that have a record, null when there are none.
 */
export function describeUsage(plan: Plan, counters: UsageCounters, history: readonly number[], period: UsagePeriod): MarkupUsage {
  const limit = plan.markupLimit;
  const unlimited = limit === null;
  const remaining = unlimited ? null : Math.max(0, limit - counters.used);
  const limitReached = !unlimited && counters.used >= limit;
  return {
    scope: 'Workspace',
    used: counters.used,
    bundleUsed: counters.bundleUsed,
    limit,
    remaining,
    totalRemaining: remaining === null ? null : remaining + plan.bundleBalance,
    isUnlimited: unlimited,
    enforcementEnabled: !unlimited,
    isCustomOverride: limit !== DEFAULT_PLAN.markupLimit,
    warningThreshold: WARNING_THRESHOLD,
    isWarning: !unlimited && counters.used >= WARNING_THRESHOLD * limit,
    isLimitReached: limitReached,
    bundleBalance: plan.bundleBalance,
    isDrawingOnBundle: (limitReached && plan.bundleBalance > 0) || counters.bundleUsed > 0,
    averageMonthlyUsage: history.length === 0 ? null : Math.round((history.reduce((sum, total) => sum + total, 0) / history.length) * 100) / 100,
    periodStart: period.start.toISOString(),
    periodEnd: period.end.toISOString(),
  };
}

export async function getMarkupUsage(workspace: WorkspaceRecord, at = new Date()): Promise<MarkupUsage> {
  const period = usagePeriod(at);
  const [plan, counters, history] = await Promise.all([
    getPlan(workspace.organizationId),
    getUsage(workspace.id, period.key),
    getUsageHistory(workspace.id, period.key),
  ]);
  return describeUsage(plan, counters, history, period);
}

// ---------------------------------------------------------------------------------------------
// Records that hang off a markup: tagged users and per-view-mode thread counts (PK MARKUP#<id>)
// ---------------------------------------------------------------------------------------------

export interface TaggableUser {
  id: string;
  name: string;
  email: string | null;
  role: Role;
}

export interface TaggedUser {
  id: string;
  name: string;
  email: string;
}

/**
 * GET /markups/:id/tag. `taggable`: the members of the markup's workspace (member records under
 * `WS#<wsId>`), by name. `tagged`: the users mentioned in the markup's threads, recorded under
 * `MARKUP#<id>` / `TAGGED#<userId>`.
 */
export async function getMarkupTags(markup: MarkupRecord): Promise<{ taggable: TaggableUser[]; tagged: TaggedUser[] }> {
  const memberPrefix = memberKey(markup.workspaceId, '').SK;
  const [members, tags] = await Promise.all([
    queryPrefix(memberKey(markup.workspaceId, '').PK, memberPrefix),
    listMarkupTags(markup.id),
  ]);
  const roles = new Map(members.map((member) => [member.userId as string, member.role as Role]));
  const users = new Map((await getUsers([...roles.keys(), ...tags.map((tag) => tag.userId as string)])).map((user) => [user.id, user]));
  const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);
  const taggable = [...roles].flatMap(([userId, role]) => {
    const user = users.get(userId);
    return user ? [{ id: user.id, name: user.name, email: user.email, role }] : [];
  });
  const tagged = tags.flatMap((tag) => {
    const user = users.get(tag.userId as string);
    return user ? [{ id: user.id, name: user.name, email: user.email ?? '' }] : [];
  });
  return { taggable: taggable.sort(byName), tagged: tagged.sort(byName) };
}

export type ViewModeCategory = 'desktop' | 'tablet' | 'mobile';

/** The device breakpoints every markup offers; the ids are fixed so clients may keep them. */
export const VIEW_MODES: readonly { id: string; category: ViewModeCategory; name: string; width: number }[] = [
  { id: 'a673a36a-f762-44d0-b3a9-09825d75b599', category: 'desktop', name: 'Desktop', width: 1440 },
  { id: '75102da4-4917-4030-86a0-e694159b746a', category: 'tablet', name: 'Tablet', width: 768 },
  { id: '9240db74-f5b4-45b2-a836-91576f169b64', category: 'mobile', name: 'Mobile', width: 375 },
];

/** GET /markups/:id/view-modes: each view mode with the number of threads placed in it (0 without a counter). */
export async function listViewModes(markupId: string): Promise<{ id: string; category: ViewModeCategory; name: string; width: number; threadCount: number }[]> {
  const counters = await listViewModeCounts(markupId);
  const counts = new Map(counters.map((counter) => [counter.viewModeId as string, Number(counter.threadCount ?? 0)]));
  return VIEW_MODES.map((mode) => ({ ...mode, threadCount: Math.max(0, counts.get(mode.id) ?? 0) }));
}
