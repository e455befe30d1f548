import { deleteMessage } from '../../shared/domain/comments/messages.js';
import { noContent, operation } from '../../shared/http/route.js';
import { MessageIdParams } from './schemas.js';

export const deleteMessageOperation = operation({
  operationId: 'deleteMessage',
  summary: 'Delete a message',
  description: "Deletes a reply with its attachments (its writer, or an admin); a thread's first message goes with the thread.",
  auth: 'apiKey',
  permission: 'message:delete',
  params: MessageIdParams,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, params, ifMatch }) => {
    await deleteMessage(principal, params.id, ifMatch);
    return noContent();
  },
});
