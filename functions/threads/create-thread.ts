import { createThread } from '../../shared/domain/comments/create-thread.js';
import { ok, operation } from '../../shared/http/route.js';
import { CreateThreadBody, ThreadSchema } from './schemas.js';

export const createThreadOperation = operation({
  operationId: 'createThread',
  summary: 'Create a thread',
  description:
    'Pins a thread with its first message on a markup; refused while comments are paused. ' +
    'Webpage markups take webpage threads (`isImageThread: false`, with `url`, `canonicalUrl`, `elements`, `elementParents`, `browserContext` ' +
    'and `viewModeId` of GET /markups/:id/view-modes, all required: a 400 names each one missing). Image, PDF and video markups take image ' +
    'threads (`isImageThread: true`) placed by `offsetXPercentage`/`offsetYPercentage`; they need none of the webpage fields (sent ones are not kept, but for `browserContext`) and take `projectImageId` ' +
    '(default the first image), `pageNumber` (PDF, required), `startTime`/`endTime` (seconds). The first message is `message` (a Delta) ' +
    'or `content` (plain text), exactly one of them. Threads are numbered 1, 2, 3 … per markup. `attachments` are confirmed ' +
    '`message_attachment` uploads made for this markup (`{ fileId }`).',
  auth: 'apiKey',
  permission: 'thread:create',
  body: CreateThreadBody,
  responses: [{ status: 200, description: 'The thread', schema: ThreadSchema }],
  handle: async ({ principal, body }) => ok(await createThread(principal, body)),
});
