import { routeTable } from '../../shared/http/route.js';
import { changeUserRoleOperation } from './change-user-role.js';
import { inviteUsersOperation } from './invite-users.js';
import { listUsersOperation } from './list-users.js';
import { removeUserOperation } from './remove-user.js';
import { externalUserRouteTable } from './external-routes.js';

export const usersRoutes = routeTable({
  ...externalUserRouteTable,
  'GET /api/v2/users': listUsersOperation,
  'POST /api/v2/users/invite': inviteUsersOperation,
  'PATCH /api/v2/users/{userId}/role': changeUserRoleOperation,
  'DELETE /api/v2/users/{userId}': removeUserOperation,
});
