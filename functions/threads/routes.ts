import type { AnyRoute } from '../../shared/http/route.js';
import { attachScreenshotRoute } from './attach-screenshot.js';
import { createThreadRoute } from './create-thread.js';
import { deleteThreadRoute } from './delete-thread.js';
import { getScreenshotRoute } from './get-screenshot.js';
import { getThreadRoute } from './get-thread.js';
import { listThreadsRoute } from './list-threads.js';
import { markThreadReadRoute } from './mark-thread-read.js';
import { movePinRoute } from './move-pin.js';
import { resolveThreadRoute, unresolveThreadRoute } from './resolve-thread.js';
import { screenshotUploadPolicyRoute } from './screenshot-upload-policy.js';

export const threadsRoutes: readonly AnyRoute[] = [
  listThreadsRoute,
  createThreadRoute,
  getThreadRoute,
  resolveThreadRoute,
  unresolveThreadRoute,
  markThreadReadRoute,
  deleteThreadRoute,
  movePinRoute,
  screenshotUploadPolicyRoute,
  attachScreenshotRoute,
  getScreenshotRoute,
];
