import { loadInstallation, toPublicInstallation } from '../../shared/domain/installations/installations.js';
import { ok, operation } from '../../shared/http/route.js';
import { InstallationIdParams, InstallationSchema } from './schemas.js';

export const getInstallationOperation = operation({
  operationId: 'getInstallation',
  summary: 'Get an installation',
  auth: 'apiKey',
  permission: 'installation:read',
  params: InstallationIdParams,
  responses: [{ status: 200, description: 'The installation', schema: InstallationSchema }],
  handle: async ({ principal, params }) => ok(toPublicInstallation((await loadInstallation(principal, params.id)).installation)),
});
