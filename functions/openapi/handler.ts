import { getConfig } from '../../shared/config.js';
import { createApiHandler } from '../../shared/http/api-handler.js';
import { ROUTE_INDEX } from '../route-index.js';
import { openApiRoutes } from './routes.js';

getConfig();

/** Serves the OpenAPI document and answers the `$default` route: 405 for a known path, else 404. */
export const handler = createApiHandler(openApiRoutes, { allRoutes: ROUTE_INDEX });
