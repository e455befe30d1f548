import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { readStorageBreakdown } from '../../shared/domain/workspaces/workspaces.js';
import { ok, operation } from '../../shared/http/route.js';
import { StorageBreakdownSchema, WorkspaceQuery } from './schemas.js';

export const getStorageBreakdownOperation = operation({
  operationId: 'getStorageBreakdown',
  summary: 'Get the storage breakdown',
  description: "Bytes stored by the workspace's organization, by kind; needs the storage feature.",
  auth: 'apiKey',
  permission: 'storage:read',
  query: WorkspaceQuery,
  responses: [{ status: 200, description: 'Bytes per kind and in total', schema: StorageBreakdownSchema }],
  handle: async ({ principal, query }) => {
    const workspace = await resolveWorkspace(principal, query.workspaceId, { useDefault: true });
    return ok(await readStorageBreakdown(workspace));
  },
});
