import type { Permission } from '../shared/auth/permissions.js';
import type { Auth, HttpMethod } from '../shared/http/route.js';
import index from './route-index.generated.json' with { type: 'json' };

/** What the route index keeps of a route: enough to match a path and to tell who may call it. */
export interface RouteIndexEntry {
  method: HttpMethod;
  path: string;
  auth: Auth;
  permission?: Permission;
}

/**
 * Every route of the service without its operation (generated from the route tables by
 * `npm run routes:generate`, checked by a unit test): what the CORS preflight function and the
 * `$default` route need, without loading the code of every operation.
 */
export const ROUTE_INDEX = index as readonly RouteIndexEntry[];
