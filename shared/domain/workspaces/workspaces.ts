import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import { authorizeOrganization } from '../../auth/authorize.js';
import type { Principal } from '../../auth/principal.js';
import { clearDefaultWorkspace } from '../../db/organizations.js';
import { startArchivingOriginals } from '../markups/originals.js';
import { getPlan } from '../../db/plans.js';
import type { Page } from '../../db/core/paging.js';
import { getStorageBreakdown, type StorageBreakdown } from '../../db/storage.js';
import type { TransactItem } from '../../db/core/transact.js';
import {
  listWorkspaces,
  toPublicWorkspace,
  type Workspace,
  type WorkspaceSort,
  insertWorkspace,
  markWorkspaceDeleted,
  newWorkspaceRecord,
  saveWorkspace,
  writeWorkspaceChange,
  type OriginalFileStoragePolicy,
  type WorkspaceRecord,
} from '../../db/workspaces.js';
import { ConflictError, FeatureNotEnabledError, NotFoundError } from '../../errors.js';
import { requireVersion, staleVersion, type IfMatch } from '../common/versions.js';
import { slugCandidate, slugify } from './slugs.js';
import { deleteWorkspaceContentLater } from './content.js';

const SLUG_ATTEMPTS = 20;

/** A workspace as the API answers it (`GET /workspace`). */
export { toPublicWorkspace, type Workspace };

/**
 * `GET /workspaces`: a page of the caller's organization's workspaces. Listing is the
 * organization's (Authentication rule 3): only an organization key, refused before anything is read.
 */
export async function listOrganizationWorkspaces(
  principal: Principal,
  options: { sortBy: WorkspaceSort; dir: 'asc' | 'desc'; limit: number; before?: string; since?: string },
): Promise<Page<Workspace>> {
  authorizeOrganization(principal);
  const page = await listWorkspaces(principal.organizationId, options);
  return { ...page, items: page.items.map(toPublicWorkspace) };
}

/** `POST /workspace`: a new workspace of the caller's organization; like listing, only an organization key (Authentication rule 3). */
export async function createOrganizationWorkspace(principal: Principal, name: string): Promise<Workspace> {
  authorizeOrganization(principal);
  return toPublicWorkspace(await createWorkspace(principal.organizationId, name));
}

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
  return withBackoff(
    async (attempt) => {
      const record = newWorkspaceRecord(organizationId, name, slugCandidate(base, attempt));
      return (await insertWorkspace(record, extraItems(record))) ? record : AGAIN;
    },
    // The next candidate at once: a taken slug stays taken.
    {
      attempts: SLUG_ATTEMPTS,
      baseMs: 0,
      exhausted: () => new ConflictError(`Could not find a free slug for "${name}"; choose one with PATCH /workspace.`),
    },
  );
}

/**
 * Renames a workspace and/or changes its slug (which counts as activity); a slug taken in the
 * organization is a 409. With `ifMatch`, the write holds only at the version read (else 412).
 */
export async function updateWorkspace(
  current: WorkspaceRecord,
  changes: { name?: string; slug?: string },
  ifMatch?: IfMatch,
): Promise<WorkspaceRecord> {
  const subject = `Workspace ${current.id}`;
  requireVersion(ifMatch, current.version, subject);
  const now = new Date().toISOString();
  const next: WorkspaceRecord = { ...current, ...definedOnly(changes), modifiedAt: now, lastActivityAt: now, version: current.version + 1 };
  const outcome = await writeWorkspaceChange(current, next, { expectedVersion: ifMatch ? current.version : undefined });
  if (outcome === 'slug-taken')
    throw new ConflictError(`The slug "${next.slug}" is already used by another workspace of this organization.`);
  if (outcome === 'gone') throw ifMatch ? staleVersion(subject) : new NotFoundError(`${subject} does not exist.`);
  return next;
}

export async function deleteWorkspace(workspace: WorkspaceRecord, ifMatch?: IfMatch): Promise<void> {
  const subject = `Workspace ${workspace.id}`;
  requireVersion(ifMatch, workspace.version, subject);
  const deleted = await markWorkspaceDeleted(workspace, new Date().toISOString(), {
    expectedVersion: ifMatch ? workspace.version : undefined,
  });
  if (!deleted) throw ifMatch ? staleVersion(subject) : new NotFoundError(`${subject} does not exist.`);
  await clearDefaultWorkspace(workspace.organizationId, workspace.id);
  // Its markups and files go in the worker, which frees their bytes; until then they count.
  await deleteWorkspaceContentLater(workspace);
}

/** Workspaces rule 3: settings updates, archive-all and the storage breakdown need the storage feature. */
export async function requireStorageFeature(organizationId: string): Promise<void> {
  const plan = await getPlan(organizationId);
  if (!plan.storageFeatureEnabled) {
    throw new FeatureNotEnabledError(
      'storage',
      "The organization's plan does not include the storage feature (original-file storage and storage reports).",
    );
  }
}

/**
 * Changes the original-file storage policy. With `applyToExisting` and `NEVER_STORE`, originals
 * already retained are archived too (Workspaces rule 2) by a worker job: the answer reports how
 * many the job will archive and names it.
 */
export async function updateStorageSettings(
  workspace: WorkspaceRecord,
  changes: { originalFileStoragePolicy?: OriginalFileStoragePolicy; applyToExisting?: boolean },
): Promise<{ originalFileStoragePolicy: OriginalFileStoragePolicy; appliedToExistingCount?: number; jobId?: string }> {
  let record = workspace;
  if (changes.originalFileStoragePolicy && changes.originalFileStoragePolicy !== workspace.originalFileStoragePolicy) {
    record = { ...workspace, originalFileStoragePolicy: changes.originalFileStoragePolicy, modifiedAt: new Date().toISOString() };
    if (!(await saveWorkspace(record))) throw new NotFoundError(`Workspace ${workspace.id} does not exist.`);
  }
  const settings = { originalFileStoragePolicy: record.originalFileStoragePolicy };
  if (!changes.applyToExisting) return settings;
  if (record.originalFileStoragePolicy !== 'NEVER_STORE') return { ...settings, appliedToExistingCount: 0 };
  const job = await startArchivingOriginals(record.id, { includeKept: false });
  return { ...settings, appliedToExistingCount: job.archivedCount, jobId: job.jobId };
}

function definedOnly<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

/** Bytes the workspace's organization stores, by kind: needs the storage feature (`requireStorageFeature`). */
export async function readStorageBreakdown(workspace: WorkspaceRecord): Promise<StorageBreakdown> {
  await requireStorageFeature(workspace.organizationId);
  return getStorageBreakdown(workspace.organizationId);
}
