import { idempotent, routeTable } from '../../shared/http/route.js';
import { createInstallationOperation } from './create-installation.js';
import { deleteInstallationOperation } from './delete-installation.js';
import { getInstallationOperation } from './get-installation.js';
import { listInstallationsOperation } from './list-installations.js';

export const installationsRoutes = routeTable({
  'POST /api/v2/installations': idempotent(createInstallationOperation),
  'GET /api/v2/installations': listInstallationsOperation,
  'GET /api/v2/installations/{id}': getInstallationOperation,
  'DELETE /api/v2/installations/{id}': deleteInstallationOperation,
});
