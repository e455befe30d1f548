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
