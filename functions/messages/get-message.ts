import { readMessage } from '../../shared/domain/comments/messages.js';
import { ok, operation } from '../../shared/http/route.js';
import { MessageIdParams } from './schemas.js';
import { MessageSchema } from '../threads/schemas.js';

export const getMessageOperation = operation({
  operationId: 'getMessage',
  summary: 'Get a message',
  description:
    "A message, as its thread shows it, with the caller's read state. " +
    "Its `ETag` names the version `PATCH` and `DELETE /messages/{id}` compare an `If-Match` with (a thread's ETag names the thread's version, which every message of it moves). " +
    'Reading does not mark the message read.',
  extension: true,
  auth: 'apiKey',
  permission: 'thread:read',
  params: MessageIdParams,
  responses: [{ status: 200, description: 'The message', schema: MessageSchema }],
  handle: async ({ principal, params }) => {
    const { message, version } = await readMessage(principal, params.id);
    return ok(message, version);
  },
});
