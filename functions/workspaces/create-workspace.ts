import { createOrganizationWorkspace } from '../../shared/domain/workspaces/workspaces.js';
import { created, operation } from '../../shared/http/route.js';
import { NameBody } from '../../shared/http/schemas.js';
import { WorkspaceSchema } from './schemas.js';

export const createWorkspaceOperation = operation({
  operationId: 'createWorkspace',
  summary: 'Create a workspace',
  description: 'Creates a workspace with its root and archive folders. Organization keys only.',
  auth: 'apiKey',
  permission: 'workspace:create',
  body: NameBody,
  responses: [{ status: 201, description: 'The new workspace', schema: WorkspaceSchema }],
  handle: async ({ principal, body }) => created(await createOrganizationWorkspace(principal, body.name)),
});
