import { completeUpload } from '../../shared/domain/uploads/uploads.js';
import { ok, operation } from '../../shared/http/route.js';
import { UploadCompleteBody, UploadedFileSchema } from './schemas.js';

const DESCRIPTION =
  'Step 3 of the upload flow: `etag` is the ETag storage answered the form post with, quotes included. Checks that the object ' +
  "landed and matches the policy (size, content type, ETag) and marks the file confirmed, counting its bytes in the organization's " +
  "storage; 400 when it has not landed yet or does not match, 404 for an unknown file id, 403 for another workspace's file. " +
  'Completing again answers the same. Every resource type answers the same shape: `id` (the file id), `key`, `mimeType`, `filesize`, ' +
  '`originalFilename`, plus `resourceType`, `resourceId`, `workspaceId`, and `width`/`height` for images whose size could be read. ' +
  'Confirmed `markup_asset` files become markups with POST /markups/from-files.';

export const uploadCompleteOperation = operation({
  operationId: 'completeUpload',
  summary: 'Confirm an upload',
  description: `Confirms an uploaded file. ${DESCRIPTION}`,
  auth: 'apiKey',
  permission: 'upload:complete',
  body: UploadCompleteBody,
  responses: [{ status: 200, description: 'The confirmed file', schema: UploadedFileSchema }],
  handle: async ({ principal, body }) => ok(await completeUpload(principal, body)),
});
