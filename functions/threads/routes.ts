import { conditional, idempotent, routeTable } from '../../shared/http/route.js';
import { attachScreenshotOperation } from './attach-screenshot.js';
import { createThreadOperation } from './create-thread.js';
import { deleteThreadOperation } from './delete-thread.js';
import { getScreenshotOperation } from './get-screenshot.js';
import { getThreadOperation } from './get-thread.js';
import { listThreadsOperation } from './list-threads.js';
import { markThreadReadOperation } from './mark-thread-read.js';
import { movePinOperation } from './move-pin.js';
import { resolveThreadOperation, unresolveThreadOperation } from './resolve-thread.js';
import { screenshotUploadPolicyOperation } from './screenshot-upload-policy.js';

export const threadsRoutes = routeTable({
  'GET /api/v2/threads': listThreadsOperation,
  'POST /api/v2/threads': idempotent(createThreadOperation),
  'GET /api/v2/threads/{id}': conditional(getThreadOperation),
  'POST /api/v2/threads/{id}/resolve': conditional(resolveThreadOperation),
  'POST /api/v2/threads/{id}/unresolve': conditional(unresolveThreadOperation),
  'POST /api/v2/threads/{id}/read': markThreadReadOperation,
  'DELETE /api/v2/threads/{id}': conditional(deleteThreadOperation),
  'PATCH /api/v2/threads/{id}/move-pin': conditional(movePinOperation),
  'GET /api/v2/threads/{id}/screenshot-upload-policy': screenshotUploadPolicyOperation,
  'PUT /api/v2/threads/{id}/screenshot': attachScreenshotOperation,
  'GET /api/v2/threads/{id}/screenshot': getScreenshotOperation,
});
