import { deleteInstallation } from '../../shared/domain/installations/installations.js';
import { noContent, operation } from '../../shared/http/route.js';
import { InstallationIdParams } from './schemas.js';

export const deleteInstallationOperation = operation({
  operationId: 'deleteInstallation',
  summary: 'Delete an installation',
  description: 'Its `publicKey` stops resolving at once; a markup created with it stays.',
  auth: 'apiKey',
  permission: 'installation:manage',
  params: InstallationIdParams,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, params }) => {
    await deleteInstallation(principal, params.id);
    return noContent();
  },
});
