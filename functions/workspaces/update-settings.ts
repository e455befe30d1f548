import { pickWorkspaceId, resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { requireStorageFeature, updateStorageSettings } from '../../shared/domain/workspaces/workspaces.js';
import { ok, operation } from '../../shared/http/route.js';
import { SettingsSchema, UpdateSettingsBody, WorkspaceQuery } from './schemas.js';

export const updateSettingsOperation = operation({
  operationId: 'updateWorkspaceSettings',
  summary: 'Update workspace settings',
  description:
    'Changes the original-file storage policy; needs the storage feature. ' +
    '`applyToExisting: true` with `NEVER_STORE` also archives originals already retained: the answer reports how many in `appliedToExistingCount` at once and names the archive job in `jobId`; the worker archives them shortly after.',
  auth: 'apiKey',
  permission: 'workspace:update',
  query: WorkspaceQuery,
  body: UpdateSettingsBody,
  responses: [{ status: 200, description: 'The settings', schema: SettingsSchema }],
  handle: async ({ principal, query, body }) => {
    const workspace = await resolveWorkspace(principal, pickWorkspaceId(query.workspaceId, body.workspaceId));
    await requireStorageFeature(workspace.organizationId);
    return ok(await updateStorageSettings(workspace, body));
  },
});
