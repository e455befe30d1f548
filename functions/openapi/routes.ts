import { operation, routeTable } from '../../shared/http/route.js';
import document from './openapi.generated.json' with { type: 'json' };

/**
 * The openapi group's table. Its document covers every route of the service: it is generated from
 * the route tables (`npm run routes:generate`; a unit test fails when it is out of date), so this
 * function serves it without loading every operation's code.
 */
export const openApiRoutes = routeTable({
  'GET /api/v2/openapi.json': operation({
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    auth: 'none',
    responses: [{ status: 200, description: 'The OpenAPI document', envelope: false }],
    handle: async () => ({ status: 200, body: document }),
  }),
});
