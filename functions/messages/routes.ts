import type { AnyRoute } from '../../shared/http/route.js';
import { createMessageRoute } from './create-message.js';
import { deleteMessageRoute } from './delete-message.js';
import { markMessageReadRoute } from './mark-message-read.js';
import { updateMessageRoute } from './update-message.js';

export const messagesRoutes: readonly AnyRoute[] = [createMessageRoute, updateMessageRoute, markMessageReadRoute, deleteMessageRoute];
