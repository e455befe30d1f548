import { failedConditionIndex, isConditionFailure } from '../db/errors.js';
import { clearDefaultWorkspace } from '../db/organizations.js';
import { archiveRetainedOriginals } from './originals.js';
import { getPlan } from '../db/plans.js';
import { transact, putNew, type TransactItem } from '../db/transact.js';
import {
  createWorkspaceItems,
  deleteWorkspaceItems,
  newWorkspaceRecord,
  updateWorkspaceItem,
  workspaceSlugKey,
  type OriginalFileStoragePolicy,
  type WorkspaceRecord,
} from '../db/workspaces.js';
import { ConflictError, FeatureNotEnabledError, NotFoundError } from '../http/errors.js';
import { slugCandidate, slugify } from './slugs.js';
import { getConfig } from '../config.js';

const SLUG_ATTEMPTS = 20;

/**
 * Creates a workspace with its root and archive folders in one transaction. The slug comes from the
 * name; when taken, the next free `-2`, `-3`, … is used, each attempt a fresh conditional write.
 * `extraItems` join the same transaction (the organization record of a new organization).
 */
export async function createWorkspace(
  organizationId: string,
  name: string,
  extraItems: (record: WorkspaceRecord) => TransactItem[] = () => [],
): Promise<WorkspaceRecord> {
  const base = slugify(name);
  for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt += 1) {
    const record = newWorkspaceRecord(organizationId, name, slugCandidate(base, attempt));
    try {
      await transact([...createWorkspaceItems(record), ...extraItems(record)]);
      return record;
    } catch (error) {
      if (failedConditionIndex(error) !== 1) throw error;
    }
  }
  throw new ConflictError(`Could not find a free slug for "${name}"; choose one with PATCH /workspace.`);
}

/** Renames a workspace and/or changes its slug (which counts as activity); a slug taken in the organization is a 409. */
export async function updateWorkspace(current: WorkspaceRecord, changes: { name?: string; slug?: string }): Promise<WorkspaceRecord> {
  const now = new Date().toISOString();
  const next: WorkspaceRecord = { ...current, ...definedOnly(changes), modifiedAt: now, lastActivityAt: now };
  const items: TransactItem[] = [updateWorkspaceItem(next)];
  const slugChanged = next.slug !== current.slug;
  if (slugChanged) {
    items.push(putNew({ ...workspaceSlugKey(next.organizationId, next.slug), entity: 'WorkspaceSlug', workspaceId: next.id }));
    items.push({ Delete: { TableName: getConfig().tableName, Key: workspaceSlugKey(current.organizationId, current.slug) } });
  }
  try {
    await transact(items);
  } catch (error) {
    const failed = failedConditionIndex(error);
    if (failed === 1) throw new ConflictError(`The slug "${next.slug}" is already used by another workspace of this organization.`);
    if (failed === 0) throw new NotFoundError(`Workspace ${current.id} does not exist.`);
    throw error;
  }
  return next;
}

export async function deleteWorkspace(workspace: WorkspaceRecord): Promise<void> {
  try {
    await transact(deleteWorkspaceItems(workspace, new Date().toISOString()));
  } catch (error) {
    if (isConditionFailure(error)) throw new NotFoundError(`Workspace ${workspace.id} does not exist.`);
    throw error;
  }
  await clearDefaultWorkspace(workspace.organizationId, workspace.id);
}

/** Workspaces rule 3: settings updates, archive-all and the storage breakdown need the storage feature. */
export async function requireStorageFeature(organizationId: string): Promise<void> {
  const plan = await getPlan(organizationId);
  if (!plan.storageFeatureEnabled) {
    throw new FeatureNotEnabledError('storage', "The organization's plan does not include the storage feature (original-file storage and storage reports).");
  }
}

/**
 * Changes the original-file storage policy. With `applyToExisting` and `NEVER_STORE`, originals
 * already retained are archived too (Workspaces rule 2) and their number is reported.
 */
export async function updateStorageSettings(
  workspace: WorkspaceRecord,
  changes: { originalFileStoragePolicy?: OriginalFileStoragePolicy; applyToExisting?: boolean },
): Promise<{ originalFileStoragePolicy: OriginalFileStoragePolicy; appliedToExistingCount?: number }> {
  let record = workspace;
  if (changes.originalFileStoragePolicy && changes.originalFileStoragePolicy !== workspace.originalFileStoragePolicy) {
    record = { ...workspace, originalFileStoragePolicy: changes.originalFileStoragePolicy, modifiedAt: new Date().toISOString() };
    try {
      await transact([updateWorkspaceItem(record)]);
    } catch (error) {
      if (isConditionFailure(error)) throw new NotFoundError(`Workspace ${workspace.id} does not exist.`);
      throw error;
    }
  }
  const settings = { originalFileStoragePolicy: record.originalFileStoragePolicy };
  if (!changes.applyToExisting) return settings;
  const appliedToExistingCount = record.originalFileStoragePolicy === 'NEVER_STORE' ? await archiveRetainedOriginals(record.id, { includeKept: false }) : 0;
  return { ...settings, appliedToExistingCount };
}

function definedOnly<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

