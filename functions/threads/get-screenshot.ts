import { getScreenshot } from '../../shared/domain/comments/screenshots.js';
import { ok, operation } from '../../shared/http/route.js';
import { ScreenshotSchema, ThreadIdParams } from './schemas.js';

export const getScreenshotOperation = operation({
  operationId: 'getThreadScreenshot',
  summary: 'Get a thread screenshot',
  description: "A thread's screenshot with a presigned link to it (and its thumbnail once made); 404 when it has none.",
  auth: 'apiKey',
  permission: 'thread:read',
  params: ThreadIdParams,
  responses: [{ status: 200, description: 'The screenshot', schema: ScreenshotSchema }],
  handle: async ({ principal, params }) => ok(await getScreenshot(principal, params.id)),
});
