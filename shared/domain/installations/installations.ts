import { randomBytes, randomUUID } from 'node:crypto';
import { authorize, requireInScope } from '../../auth/authorize.js';
import type { Principal } from '../../auth/principal.js';
import {
  deleteInstallation as deleteInstallationRecord,
  getInstallation,
  insertInstallation,
  installationWrites,
  listWorkspaceInstallations,
  type InstallationRecord,
} from '../../db/installations.js';
import type { Page } from '../../db/core/paging.js';
import { getWorkspace, type WorkspaceRecord } from '../../db/workspaces.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { createUrlMarkups } from '../markups/create.js';
import { resolveWorkspace } from '../workspaces/scope.js';
import type { InstallationView } from '../../schemas/installations.js';

/** The spec's Installation, with what the embedding client needs beside it (`InstallationSchema`). */
export type Installation = InstallationView;

/** What creating an installation takes, validated: `signingKey` as SPKI PEM, origins normalised. */
export interface InstallationInput {
  workspaceId?: string;
  signingKey: string;
  allowedOrigins?: string[] | null;
  url?: string;
  name?: string;
}

/** The public shape; the signing key never leaves the service. */
export function toPublicInstallation(record: InstallationRecord): Installation {
  return {
    id: record.id,
    createdAt: record.createdAt,
    modifiedAt: record.modifiedAt,
    deletedAt: null,
    workspaceId: record.workspaceId,
    publicKey: record.publicKey,
    status: record.status,
    allowedOrigins: record.allowedOrigins,
    markupId: record.markupId,
  };
}

/** A browser-safe identifier with 256 random bits: it names the installation in the client's page, nothing more. */
const newPublicKey = () => `pk_${randomBytes(32).toString('base64url')}`;

/**
 * Creates an installation in the caller's workspace (organization keys name it: 400 without, 403
 * for another organization's). With `url`, a webpage markup attached to it is created as POST
 * /markups/url creates one, in the SAME transaction as the installation, its publicKey claim and
 * the allowance charge: a 402 leaves neither.
 */
export async function createInstallation(principal: Principal, input: InstallationInput): Promise<InstallationRecord> {
  const workspace = await resolveWorkspace(principal, input.workspaceId);
  const id = randomUUID();
  const at = new Date().toISOString();
  const recordFor = (markupId: string | null): InstallationRecord => ({
    id,
    organizationId: workspace.organizationId,
    workspaceId: workspace.id,
    publicKey: newPublicKey(),
    signingKey: input.signingKey,
    allowedOrigins: input.allowedOrigins ? [...new Set(input.allowedOrigins)] : null,
    markupId,
    url: input.url ?? null,
    status: 'active',
    createdAt: at,
    modifiedAt: at,
  });
  if (input.url === undefined) {
    const record = recordFor(null);
    const outcome = await insertInstallation(record);
    if (outcome === 'workspace-gone') throw new NotFoundError(`Workspace ${workspace.id} was deleted meanwhile.`);
    if (outcome === 'taken') throw new ConflictError('The installation could not be created because its identifiers are taken; try again.');
    return record;
  }
  let created: InstallationRecord | undefined;
  await createUrlMarkups(principal, [{ url: input.url, name: input.name, workspaceId: workspace.id }], {
    installationId: id,
    alsoWrite: ([markup]) => {
      created = recordFor(markup!.id);
      return installationWrites(created);
    },
  });
  return created!;
}

/**
 * An installation the caller may act on with the route's permission: 404 for an unknown id or one
 * of a deleted workspace, 403 for one outside the key's organization or workspace.
 */
export async function loadInstallation(
  principal: Principal,
  installationId: string,
): Promise<{ installation: InstallationRecord; workspace: WorkspaceRecord }> {
  const installation = await getInstallation(installationId);
  if (!installation) throw new NotFoundError(`Installation ${installationId} does not exist.`);
  requireInScope(
    principal,
    { id: installation.workspaceId, organizationId: installation.organizationId },
    `Installation ${installationId}`,
  );
  const workspace = await getWorkspace(installation.workspaceId);
  if (!workspace) throw new NotFoundError(`Installation ${installationId} does not exist.`);
  await authorize(principal, workspace);
  return { installation, workspace };
}

/** One page of a workspace's installations, newest first. */
export async function listInstallations(
  principal: Principal,
  query: { workspaceId?: string; limit: number; before?: string },
): Promise<Page<InstallationRecord>> {
  const workspace = await resolveWorkspace(principal, query.workspaceId);
  return listWorkspaceInstallations(workspace.id, { limit: query.limit, before: query.before });
}

/** Deletes an installation and its publicKey claim together; a concurrent delete that won leaves this one a 404. */
export async function deleteInstallation(principal: Principal, installationId: string): Promise<void> {
  const { installation } = await loadInstallation(principal, installationId);
  if (!(await deleteInstallationRecord(installation))) throw new NotFoundError(`Installation ${installationId} does not exist.`);
}
