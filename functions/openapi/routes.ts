import { buildOpenApi } from '../../shared/http/openapi.js';
import { route, type AnyRoute } from '../../shared/http/route.js';
import { ROUTE_GROUPS } from '../route-tables.js';

let document: Record<string, unknown> | undefined;

export const getOpenApiRoute: AnyRoute = route({
  method: 'GET',
  path: '/api/v2/openapi.json',
  operationId: 'getOpenApiDocument',
  summary: 'This OpenAPI 3.1 document',
  auth: 'none',
  responses: [{ status: 200, description: 'The OpenAPI document', envelope: false }],
  handle: async () => {
    document ??= buildOpenApi(allRoutes());
    return { status: 200, body: document };
  },
});

export const openApiRoutes: readonly AnyRoute[] = [getOpenApiRoute];

/** Every route of the service, this group's included. */
export function allRoutes(): AnyRoute[] {
  return [...Object.values(ROUTE_GROUPS).flat(), ...openApiRoutes];
}
