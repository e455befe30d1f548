import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { ok, operation } from '../../shared/http/route.js';
import { SettingsSchema, WorkspaceQuery } from './schemas.js';

export const getSettingsOperation = operation({
  operationId: 'getWorkspaceSettings',
  summary: 'Get workspace settings',
  description: "The workspace's original-file storage policy.",
  auth: 'apiKey',
  permission: 'workspace:read',
  query: WorkspaceQuery,
  responses: [{ status: 200, description: 'The settings', schema: SettingsSchema }],
  handle: async ({ principal, query }) => {
    const workspace = await resolveWorkspace(principal, query.workspaceId);
    return ok({ originalFileStoragePolicy: workspace.originalFileStoragePolicy });
  },
});
