import type { AnyRoute } from '../../shared/http/route.js';
import { archiveAllOriginalsRoute } from './archive-all-originals.js';
import { createWorkspaceRoute } from './create-workspace.js';
import { deleteWorkspaceRoute } from './delete-workspace.js';
import { getSettingsRoute } from './get-settings.js';
import { getStorageBreakdownRoute } from './get-storage-breakdown.js';
import { getWorkspaceRoute } from './get-workspace.js';
import { listWorkspacesRoute } from './list-workspaces.js';
import { updateSettingsRoute } from './update-settings.js';
import { updateWorkspaceRoute } from './update-workspace.js';

export const workspaceRoutes: readonly AnyRoute[] = [
  getWorkspaceRoute,
  listWorkspacesRoute,
  createWorkspaceRoute,
  updateWorkspaceRoute,
  deleteWorkspaceRoute,
  getSettingsRoute,
  updateSettingsRoute,
  archiveAllOriginalsRoute,
  getStorageBreakdownRoute,
];
