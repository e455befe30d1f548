import { markThreadRead } from '../../shared/domain/comments/change-thread.js';
import { noContent, route } from '../../shared/http/route.js';
import { ThreadIdParams } from './schemas.js';

export const markThreadReadRoute = route({
  method: 'POST',
  path: '/api/v2/threads/{id}/read',
  operationId: 'markThreadRead',
  summary: 'Mark a thread and all its messages read for the caller',
  auth: 'apiKey',
  params: ThreadIdParams,
  responses: [{ status: 204, description: 'Marked read' }],
  handle: async ({ principal, params }) => {
    await markThreadRead(principal, params.id);
    return noContent();
  },
});
