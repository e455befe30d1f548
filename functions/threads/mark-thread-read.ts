import { markThreadRead } from '../../shared/domain/comments/change-thread.js';
import { noContent, operation } from '../../shared/http/route.js';
import { ThreadIdParams } from './schemas.js';

export const markThreadReadOperation = operation({
  operationId: 'markThreadRead',
  summary: 'Mark a thread read',
  description: 'Marks a thread and all its messages read for the caller.',
  auth: 'apiKey',
  permission: 'thread:mark-read',
  params: ThreadIdParams,
  responses: [{ status: 204, description: 'Marked read' }],
  handle: async ({ principal, params }) => {
    await markThreadRead(principal, params.id);
    return noContent();
  },
});
