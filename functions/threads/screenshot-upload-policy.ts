import { issueScreenshotPolicy } from '../../shared/domain/comments/screenshots.js';
import { ok, operation } from '../../shared/http/route.js';
import { ScreenshotPolicyQuery, ScreenshotPolicySchema, ThreadIdParams } from './schemas.js';

export const screenshotUploadPolicyOperation = operation({
  operationId: 'getThreadScreenshotUploadPolicy',
  summary: 'Get a screenshot upload form',
  description:
    "A presigned form for posting a thread's screenshot to storage. " +
    "Step 1 of the screenshot flow: a `thread_screenshot` upload policy for the thread's markup. `mimeType` must be a displayable " +
    "image (PNG, JPEG, GIF, BMP, WebP or SVG); 402 when `filesize` exceeds the plan's remaining storage. `fileId` is optional: a UUID " +
    'no upload has used yet (409 otherwise) that becomes the file id; by default a new one. POST every entry of `policy.fields` to ' +
    '`policy.url` as multipart/form-data, the `file` part last, then attach it with PUT /threads/{id}/screenshot using `key`, the ' +
    '`metadata.fileId` and the ETag storage answered.',
  auth: 'apiKey',
  permission: 'thread:update',
  params: ThreadIdParams,
  query: ScreenshotPolicyQuery,
  responses: [{ status: 200, description: 'The presigned form; `metadata` holds `fileId` and `threadId`', schema: ScreenshotPolicySchema }],
  handle: async ({ principal, params, query }) => ok(await issueScreenshotPolicy(principal, params.id, query)),
});
