import { routeTable } from '../../shared/http/route.js';
import { exchangeOperation } from './exchange.js';
import { getAuthConfigOperation } from './get-config.js';
import { sdkRoutes } from './sdk-routes.js';
import { signInRoutes } from './email-sign-in.js';

export const authRoutes = routeTable({
  'GET /api/v2/auth/config': getAuthConfigOperation,
  'POST /api/v2/auth/exchange': exchangeOperation,
  ...sdkRoutes,
  ...signInRoutes,
});
