import { attachScreenshot } from '../../shared/domain/comments/screenshots.js';
import { ok, operation } from '../../shared/http/route.js';
import { AttachScreenshotBody, ScreenshotSchema, ThreadIdParams } from './schemas.js';

export const attachScreenshotOperation = operation({
  operationId: 'attachThreadScreenshot',
  summary: 'Attach a thread screenshot',
  description:
    "Attaches or replaces a thread's screenshot. " +
    'Step 3 of the screenshot flow: confirms the posted file (as POST /uploads/upload-complete does) and attaches it; a screenshot the ' +
    'thread had is replaced and its file deleted. `key`, `mimeType` and `filesize` must be those of the upload named by `fileId`, ' +
    '`etag` the ETag storage answered to the post. `type` is `extension`, `native` or `static` (default). The answer has ' +
    '`isProcessing: true` until the thumbnail is made; attaching the same file again answers the current screenshot.',
  auth: 'apiKey',
  permission: 'thread:update',
  params: ThreadIdParams,
  body: AttachScreenshotBody,
  responses: [{ status: 200, description: 'The attached screenshot', schema: ScreenshotSchema }],
  handle: async ({ principal, params, body }) => ok(await attachScreenshot(principal, params.id, body)),
});
