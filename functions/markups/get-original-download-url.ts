import { loadMarkup } from '../../shared/domain/markups/access.js';
import { originalDownload } from '../../shared/domain/markups/originals.js';
import { ok, operation } from '../../shared/http/route.js';
import { MarkupIdParams, OriginalDownloadSchema } from './schemas.js';

export const getOriginalDownloadUrlOperation = operation({
  operationId: 'getOriginalDownloadUrl',
  summary: 'Get an original download URL',
  description:
    "A short-lived presigned URL (5 minutes) that downloads the markup's retained original file. 404 when the markup has no retained original (never had one, or it was archived).",
  auth: 'apiKey',
  permission: 'original:read',
  params: MarkupIdParams,
  responses: [{ status: 200, description: 'Where to download the original', schema: OriginalDownloadSchema }],
  handle: async ({ principal, params }) => {
    const { markup } = await loadMarkup(principal, params.id);
    return ok(await originalDownload(markup));
  },
});
