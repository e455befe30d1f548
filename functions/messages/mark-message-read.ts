import { markMessageRead } from '../../shared/domain/comments/messages.js';
import { noContent, operation } from '../../shared/http/route.js';
import { MessageIdParams } from './schemas.js';

export const markMessageReadOperation = operation({
  operationId: 'markMessageRead',
  summary: 'Mark a message read',
  description: 'Marks one message read for the caller; its thread is not marked.',
  auth: 'apiKey',
  permission: 'thread:mark-read',
  params: MessageIdParams,
  responses: [{ status: 204, description: 'Marked read' }],
  handle: async ({ principal, params }) => {
    await markMessageRead(principal, params.id);
    return noContent();
  },
});
