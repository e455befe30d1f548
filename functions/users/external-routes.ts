import type { AnyOperation, RouteKey } from '../../shared/http/route.js';
import { createExternalUserOperation } from './create-external-user.js';
import { deleteExternalUserOperation } from './delete-external-user.js';
import { getExternalUserOperation } from './get-external-user.js';
import { updateExternalUserOperation } from './update-external-user.js';

/**
 * The external-user routes of the `users` group, spread into its route table. They go before the
 * member routes: `PATCH /users/external/{externalId}` and `PATCH /users/{userId}/role` both fit
 * `/users/external/role`, and among equally literal templates the first listed wins.
 */
export const externalUserRouteTable = {
  'POST /api/v2/users/external': createExternalUserOperation,
  'GET /api/v2/users/external/{externalId}': getExternalUserOperation,
  'PATCH /api/v2/users/external/{externalId}': updateExternalUserOperation,
  'DELETE /api/v2/users/external/{externalId}': deleteExternalUserOperation,
} satisfies Record<RouteKey, AnyOperation>;
