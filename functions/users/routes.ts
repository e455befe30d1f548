import { routeTable } from '../../shared/http/route.js';
import { externalUserRouteTable } from './external-routes.js';

export const usersRoutes = routeTable({
  ...externalUserRouteTable,
});
