import * as v from 'valibot';
import { UPLOAD_RESOURCE_TYPES } from '../../shared/schemas/uploads.js';
import { Id, integerIn } from '../../shared/http/schemas.js';

/** The answers' schemas are the domain's views' types: they live in shared/schemas. */
export { UploadedFileSchema, UploadPolicySchema } from '../../shared/schemas/uploads.js';

/**
 * RFC 6838 `type/subtype`, optionally with parameters; signed into the policy exactly as given. It is
 * sent as a header when the object is stored, so parameters too are printable ASCII only.
 */
const MIME_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}([ \t]*;[\x20-\x7e]*)?$/i;

export const UploadPolicyBody = v.object({
  resourceType: v.picklist(UPLOAD_RESOURCE_TYPES, `must be one of ${UPLOAD_RESOURCE_TYPES.join(', ')}`),
  resourceId: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(255, 'must be at most 255 characters')),
  filename: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(255, 'must be at most 255 characters'),
    // eslint-disable-next-line no-control-regex -- matching control characters is the point: a file name must not hold any
    v.regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters'),
  ),
  contentType: v.pipe(
    v.string(),
    v.trim(),
    v.maxLength(255, 'must be at most 255 characters'),
    v.regex(MIME_TYPE, 'must be a mime type such as image/png'),
  ),
  filesize: integerIn(1),
  /** Organization keys: the workspace of user and external-user avatars (default: the organization's default workspace). */
  workspaceId: v.optional(Id),
});

/** A file sent in a multipart form (POST /markups/file): its part's name and type, held to the rules above. */
export const FilePartHeaders = v.object({
  filename: UploadPolicyBody.entries.filename,
  contentType: v.optional(UploadPolicyBody.entries.contentType),
});

export const UploadCompleteBody = v.object({
  fileId: Id,
  etag: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters')),
});
