import { markMessageRead } from '../../shared/domain/comments/messages.js';
import { noContent, route } from '../../shared/http/route.js';
import { MessageIdParams } from './schemas.js';

export const markMessageReadRoute = route({
  method: 'POST',
  path: '/api/v2/messages/{id}/read',
  operationId: 'markMessageRead',
  summary: 'Mark one message read for the caller (its thread is not marked)',
  auth: 'apiKey',
  params: MessageIdParams,
  responses: [{ status: 204, description: 'Marked read' }],
  handle: async ({ principal, params }) => {
    await markMessageRead(principal, params.id);
    return noContent();
  },
});
