import { issueUploadPolicy } from '../../shared/domain/uploads/uploads.js';
import { ok, operation } from '../../shared/http/route.js';
import { UploadPolicyBody, UploadPolicySchema } from './schemas.js';

const DESCRIPTION =
  'Step 1 of the upload flow. `resourceId` by `resourceType`: the destination folder id for `markup_asset`, `project_original` and ' +
  '`project_image`; the id of the markup a file belongs to for `message_attachment`, `thread_screenshot`, `thread_snapshot` and ' +
  "`annotation_export`; the caller's own user id for `user_avatar`; the external user's id for `external_user_avatar` (in the key's " +
  'workspace; organization keys may pass `workspaceId`); the workspace id for `workspace_icon`. Folder and comment uploads need ' +
  'contributor or above, the workspace icon admin. `markup_asset` files must be a type a markup can be made from; avatars, icons, ' +
  "project images and screenshots must be displayable images. 402 when `filesize` exceeds the plan's remaining storage. Then POST " +
  'every entry of `policy.fields` to `policy.url` as multipart/form-data, the `file` part last, within 15 minutes; storage answers 204 ' +
  'with an `ETag`, and refuses (403, naming the field) any altered field, another size or another content type.';

export const uploadPolicyOperation = operation({
  operationId: 'createUploadPolicy',
  summary: 'Request an upload policy',
  description: `Requests a presigned POST policy for uploading one file. ${DESCRIPTION}`,
  auth: 'apiKey',
  permission: 'upload:create',
  body: UploadPolicyBody,
  responses: [{ status: 200, description: 'The policy and the new file id', schema: UploadPolicySchema }],
  handle: async ({ principal, body }) => ok(await issueUploadPolicy(principal, body)),
});
