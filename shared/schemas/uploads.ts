import * as v from 'valibot';
import { Id } from './builders.js';

/**
 * The answers of the upload routes (an issued policy, a confirmed file): the OpenAPI document
 * describes them by these schemas, and the domain's views are typed by them.
 */

/** The spec's UploadResourceType: what an uploaded file is for. */
export const UPLOAD_RESOURCE_TYPES = [
  'message_attachment',
  'thread_screenshot',
  'thread_snapshot',
  'annotation_export',
  'project_original',
  'project_image',
  'markup_asset',
  'user_avatar',
  'external_user_avatar',
  'workspace_icon',
] as const;

export const UploadPolicySchema = v.object({
  fileId: Id,
  key: v.string(),
  bucket: v.string(),
  acl: v.literal('private'),
  policy: v.object({ url: v.string(), fields: v.record(v.string(), v.string()) }),
  /** Uploads rule 6: the same object put directly by a storage client (PUT to `url` with exactly these headers). */
  directPut: v.object({ method: v.literal('PUT'), url: v.string(), headers: v.record(v.string(), v.string()) }),
  metadata: v.record(v.string(), v.union([v.string(), v.number()])),
});

export const UploadedFileSchema = v.object({
  id: Id,
  key: v.string(),
  mimeType: v.string(),
  filesize: v.number(),
  originalFilename: v.string(),
  resourceType: v.picklist(UPLOAD_RESOURCE_TYPES),
  resourceId: v.string(),
  workspaceId: Id,
  width: v.optional(v.number()),
  height: v.optional(v.number()),
});

/** What POST /uploads/upload-policy answers: the policy to post the file with. */
export type UploadPolicyView = v.InferOutput<typeof UploadPolicySchema>;

/** What POST /uploads/upload-complete answers: the confirmed file. */
export type UploadedFileView = v.InferOutput<typeof UploadedFileSchema>;
