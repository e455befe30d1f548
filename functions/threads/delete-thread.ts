import { deleteThread } from '../../shared/domain/comments/delete-thread.js';
import { noContent, operation } from '../../shared/http/route.js';
import { ThreadIdParams } from './schemas.js';

export const deleteThreadOperation = operation({
  operationId: 'deleteThread',
  summary: 'Delete a thread',
  description: 'Deletes a thread with all its messages, attachments and screenshot: its author, or an admin.',
  auth: 'apiKey',
  permission: 'thread:delete',
  params: ThreadIdParams,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, params, ifMatch }) => {
    await deleteThread(principal, params.id, ifMatch);
    return noContent();
  },
});
