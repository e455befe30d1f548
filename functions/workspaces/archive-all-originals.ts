import { archiveRetainedOriginals } from '../../shared/domain/originals.js';
import { resolveWorkspace } from '../../shared/domain/scope.js';
import { requireStorageFeature } from '../../shared/domain/workspaces.js';
import { ok, operation } from '../../shared/http/route.js';
import { ArchivedCountSchema, WorkspaceQuery } from './schemas.js';

export const archiveAllOriginalsOperation = operation({
  operationId: 'archiveAllOriginals',
  summary: 'Archive every retained original of the workspace (needs the storage feature)',
  auth: 'apiKey',
  permission: 'original:manage',
  query: WorkspaceQuery,
  responses: [{ status: 200, description: 'How many originals were archived', schema: ArchivedCountSchema }],
  handle: async ({ principal, query }) => {
    const workspace = await resolveWorkspace(principal, query.workspaceId, { useDefault: true });
    await requireStorageFeature(workspace.organizationId);
    return ok({ archivedCount: await archiveRetainedOriginals(workspace.id, { includeKept: true }) });
  },
});
