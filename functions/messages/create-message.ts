import { createMessage, MAX_MESSAGES_PER_THREAD } from '../../shared/domain/comments/messages.js';
import { ok, operation } from '../../shared/http/route.js';
import { MessageSchema } from '../threads/schemas.js';
import { CreateMessageBody, ThreadMessagesParams } from './schemas.js';

export const createMessageOperation = operation({
  operationId: 'createMessage',
  summary: 'Reply in a thread',
  description:
    'Adds a message to a thread; refused while comments are paused. ' +
    'Send `content` (plain text) or `message` (a Delta), or both reading the same; the other is derived. `mentionIds` must be ' +
    'active workspace members, not people merely invited (mentions inside the Delta count too). `attachments`: confirmed `message_attachment` uploads of the markup ' +
    '(`{ fileId }`). `clipVideos`: `{ title, sharedUrl, width, height }`. A thread holds at most ' +
    `${MAX_MESSAGES_PER_THREAD.toLocaleString('en-US')} messages: a reply past that ` +
    'is refused with 409 `message-limit` (start a new thread).',
  auth: 'apiKey',
  permission: 'message:create',
  params: ThreadMessagesParams,
  body: CreateMessageBody,
  responses: [{ status: 200, description: 'The message', schema: MessageSchema }],
  handle: async ({ principal, params, body }) => ok(await createMessage(principal, params.id, body)),
});
