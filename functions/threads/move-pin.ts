import { movePin } from '../../shared/domain/comments/change-thread.js';
import { ok, operation } from '../../shared/http/route.js';
import { MovePinBody, ThreadIdParams, ThreadRecordSchema } from './schemas.js';

export const movePinOperation = operation({
  operationId: 'moveThreadPin',
  summary: 'Move a thread pin',
  description:
    'A webpage pin moves to new `elements` (with `url`, `canonicalUrl`, `elementParents`, `browserContext`); an image, PDF or video pin ' +
    'to `viewportXPercentage`/`viewportYPercentage`. Answers the thread record: `id`, `userId`, `projectId`, `number`, `resolved` and ' +
    'the pin fields of its type.',
  auth: 'apiKey',
  permission: 'thread:update',
  params: ThreadIdParams,
  body: MovePinBody,
  responses: [{ status: 200, description: 'The thread record', schema: ThreadRecordSchema }],
  handle: async ({ principal, params, body, ifMatch }) => ok(await movePin(principal, params.id, body, ifMatch)),
});
