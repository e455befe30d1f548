import { startArchivingOriginals } from '../../shared/domain/markups/originals.js';
import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { requireStorageFeature } from '../../shared/domain/workspaces/workspaces.js';
import { ok, operation } from '../../shared/http/route.js';
import { ArchivedCountSchema, WorkspaceQuery } from './schemas.js';

export const archiveAllOriginalsOperation = operation({
  operationId: 'archiveAllOriginals',
  summary: 'Archive all originals',
  description:
    'Archives every retained original of the workspace; needs the storage feature. ' +
    'Answers at once: `archivedCount` is how many retained originals the archive job named by `jobId` will archive; the worker archives them in batches shortly after, and the storage breakdown drops their bytes as it goes.',
  auth: 'apiKey',
  permission: 'original:manage',
  query: WorkspaceQuery,
  responses: [{ status: 200, description: 'How many originals the archive job will archive, and the job', schema: ArchivedCountSchema }],
  handle: async ({ principal, query }) => {
    const workspace = await resolveWorkspace(principal, query.workspaceId, { useDefault: true });
    await requireStorageFeature(workspace.organizationId);
    return ok(await startArchivingOriginals(workspace.id, { includeKept: true }));
  },
});
