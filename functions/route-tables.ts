import type { AnyRoute } from '../shared/http/route.js';
import { itemsRoutes } from './items/routes.js';
import { markupsRoutes } from './markups/routes.js';
import { messagesRoutes } from './messages/routes.js';
import { threadsRoutes } from './threads/routes.js';
import { uploadsRoutes } from './uploads/routes.js';
import { workspaceRoutes } from './workspaces/routes.js';

/**
 * Every route group's table, by group name. The CDK API stack, the local gateway and the OpenAPI
 * document are all built from this one list.
 */
export const ROUTE_GROUPS = {
  workspaces: workspaceRoutes,
  items: itemsRoutes,
  markups: markupsRoutes,
  uploads: uploadsRoutes,
  threads: threadsRoutes,
  messages: messagesRoutes,
} as const satisfies Record<string, readonly AnyRoute[]>;

export type RouteGroup = keyof typeof ROUTE_GROUPS | 'openapi';
