import { updateMessage } from '../../shared/domain/comments/messages.js';
import { ok, operation } from '../../shared/http/route.js';
import { MessageIdParams, UpdateMessageBody, UpdatedMessageSchema } from './schemas.js';

export const updateMessageOperation = operation({
  operationId: 'updateMessage',
  summary: 'Edit a message',
  description:
    'Edits a message (its writer only); it becomes unread for everyone else. ' +
    'Fields left out stay. `attachments` is the whole new list: attachments to keep by their id (the upload id) and new uploads. ' +
    '`priority` (0 to 1000, or null) sets the priority of the thread.',
  auth: 'apiKey',
  permission: 'message:update',
  params: MessageIdParams,
  body: UpdateMessageBody,
  responses: [{ status: 200, description: 'The message', schema: UpdatedMessageSchema }],
  handle: async ({ principal, params, body, ifMatch }) => {
    const { message, version } = await updateMessage(principal, params.id, body, ifMatch);
    return ok({ message }, version);
  },
});
