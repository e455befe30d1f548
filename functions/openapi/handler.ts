import { getConfig } from '../../shared/config.js';
import { createApiHandler } from '../../shared/http/api-handler.js';
import { allRoutes, routesOf } from '../registry.js';

getConfig();

/** Serves the OpenAPI document and answers the `$default` route: 405 for a known path, else 404. */
export const handler = createApiHandler(routesOf('openapi'), { allRoutes: allRoutes() });
