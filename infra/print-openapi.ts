import { routeGroups } from '../functions/registry.js';
import { buildOpenApi } from '../shared/http/openapi.js';

/** `npm run openapi`: prints the OpenAPI document that GET /api/v2/openapi.json serves. */
process.stdout.write(`${JSON.stringify(buildOpenApi(routeGroups()), null, 2)}\n`);
