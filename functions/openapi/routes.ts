import { buildOpenApi } from '../../shared/http/openapi.js';
import { operation, routeTable, type AnyRoute } from '../../shared/http/route.js';

/**
 * The openapi group's table. Its document covers every route of the service, and the registry
 * (`functions/registry.ts`) is the list of them; it hands that list in, since importing the
 * registry here would make the two modules import each other.
 */
export function openApiRoutes(allRoutes: () => readonly AnyRoute[]): readonly AnyRoute[] {
  let document: Record<string, unknown> | undefined;
  return routeTable({
    'GET /api/v2/openapi.json': operation({
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1 document',
      auth: 'none',
      responses: [{ status: 200, description: 'The OpenAPI document', envelope: false }],
      handle: async () => {
        document ??= buildOpenApi(allRoutes());
        return { status: 200, body: document };
      },
    }),
  });
}
