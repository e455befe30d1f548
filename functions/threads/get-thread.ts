import { getThread } from '../../shared/domain/comments/read-threads.js';
import { ok, operation } from '../../shared/http/route.js';
import { ThreadIdParams, ThreadSchema } from './schemas.js';

export const getThreadOperation = operation({
  operationId: 'getThread',
  summary: 'Get a thread',
  description: "A thread with its messages and the caller's read state.",
  auth: 'apiKey',
  permission: 'thread:read',
  params: ThreadIdParams,
  responses: [{ status: 200, description: 'The thread', schema: ThreadSchema }],
  handle: async ({ principal, params }) => {
    const { thread, version } = await getThread(principal, params.id);
    return ok(thread, version);
  },
});
