import { CONVERSION_LIMITS_DESCRIPTION } from '../../shared/convert/limits.js';
import { createMarkupFromUploads } from '../../shared/domain/markups/file-markups.js';
import { INCLUDE_ALL, toPublicMarkup } from '../../shared/domain/markups/view.js';
import { ok, operation } from '../../shared/http/route.js';
import { FilesMarkupBody, MarkupSchema } from './schemas.js';

export const createFromFilesOperation = operation({
  operationId: 'createMarkupFromFiles',
  summary: 'Create a markup from uploads',
  description:
    'Creates a markup from confirmed uploads: one markup against the monthly allowance. ' +
    "`fileIds` (1 to 50, no duplicates) name confirmed, unused `markup_asset` uploads of `workspaceId` (which must be the key's " +
    'workspace: 403 otherwise, and for files of another workspace; a workspace key may leave it out, an organization key must name it). ' +
    'Displayable images (png, jpeg, gif, bmp, webp, svg) make one ' +
    'image markup, one page per image in `fileIds` order, ready at once; an image whose bytes do not decode as its type is a 400 that creates nothing. One PDF, one video (mp4, mov, webm, avi, wmv, mkv, mxf) or ' +
    'one tiff, psd or eps makes a `pdf`, `video` or `image` markup on its own (not mixed: 400) with `isReady` false and ' +
    '`conversionStatus` `pending` until the conversion finishes; a conversion that fails gives its markup back to the monthly allowance. Each file is consumed by the markup (a used file is a 400: upload ' +
    "it again). `name` defaults to the first file's name without extension, `parentFolderId` to the workspace root. 402 when the " +
    'monthly allowance is used up or the organization is over its storage limit. ' +
    CONVERSION_LIMITS_DESCRIPTION,
  auth: 'apiKey',
  permission: 'markup:create',
  body: FilesMarkupBody,
  responses: [{ status: 200, description: 'The new markup, with its files', schema: MarkupSchema }],
  handle: async ({ principal, body, appUrl }) => {
    const { record, access } = await createMarkupFromUploads(principal, body);
    return ok(await toPublicMarkup(record, { role: access.role, plan: access.plan, appUrl, include: INCLUDE_ALL }));
  },
});
