import { conditional, idempotent, routeTable } from '../../shared/http/route.js';
import { createMessageOperation } from './create-message.js';
import { deleteMessageOperation } from './delete-message.js';
import { getMessageOperation } from './get-message.js';
import { markMessageReadOperation } from './mark-message-read.js';
import { updateMessageOperation } from './update-message.js';

export const messagesRoutes = routeTable({
  'POST /api/v2/threads/{id}/messages': idempotent(createMessageOperation),
  'GET /api/v2/messages/{id}': conditional(getMessageOperation),
  'PATCH /api/v2/messages/{id}': conditional(updateMessageOperation),
  'POST /api/v2/messages/{id}/read': markMessageReadOperation,
  'DELETE /api/v2/messages/{id}': conditional(deleteMessageOperation),
});
