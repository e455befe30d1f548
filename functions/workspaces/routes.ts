import { conditional, idempotent, routeTable } from '../../shared/http/route.js';
import { archiveAllOriginalsOperation } from './archive-all-originals.js';
import { createWorkspaceOperation } from './create-workspace.js';
import { deleteWorkspaceOperation } from './delete-workspace.js';
import { getSettingsOperation } from './get-settings.js';
import { getStorageBreakdownOperation } from './get-storage-breakdown.js';
import { getWorkspaceOperation } from './get-workspace.js';
import { listWorkspacesOperation } from './list-workspaces.js';
import { updateSettingsOperation } from './update-settings.js';
import { updateWorkspaceOperation } from './update-workspace.js';

export const workspaceRoutes = routeTable({
  'GET /api/v2/workspace': conditional(getWorkspaceOperation),
  'GET /api/v2/workspaces': listWorkspacesOperation,
  'POST /api/v2/workspace': idempotent(createWorkspaceOperation),
  'PATCH /api/v2/workspace': conditional(updateWorkspaceOperation),
  'DELETE /api/v2/workspace': conditional(deleteWorkspaceOperation),
  'GET /api/v2/workspace/settings': getSettingsOperation,
  'PATCH /api/v2/workspace/settings': updateSettingsOperation,
  'POST /api/v2/workspace/originals/archive-all': archiveAllOriginalsOperation,
  'GET /api/v2/workspace/storage-breakdown': getStorageBreakdownOperation,
});
