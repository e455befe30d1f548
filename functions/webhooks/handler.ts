import { getConfig } from '../../shared/config.js';
import { createApiHandler } from '../../shared/http/api-handler.js';
import { webhooksRoutes } from './routes.js';

getConfig();

export const handler = createApiHandler(webhooksRoutes);
