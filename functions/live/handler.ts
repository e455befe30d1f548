import { getConfig } from '../../shared/config.js';
import { createApiHandler } from '../../shared/http/api-handler.js';
import { liveRoutes } from './routes.js';

getConfig();

export const handler = createApiHandler(liveRoutes);
