import { readMarkupThumbnail } from '../../shared/domain/markups/renders.js';
import { operation } from '../../shared/http/route.js';
import { MarkupIdParams } from './schemas.js';

export const getThumbnailOperation = operation({
  operationId: 'getMarkupThumbnail',
  summary: 'Get a markup thumbnail',
  description:
    "A webpage markup's rendered thumbnail (PNG, 640x400); the markup's `thumbnailUrl` points here once it exists. A plain GET without credentials, like the image URLs of markups: the unguessable markup id is the capability. 404 until the thumbnail is rendered.",
  auth: 'none',
  params: MarkupIdParams,
  responses: [{ status: 200, description: 'The PNG image', mediaType: 'image/png' }],
  handle: async ({ params }) => {
    const data = await readMarkupThumbnail(params.id);
    return { status: 200, binary: { data, contentType: 'image/png' }, headers: { 'Cache-Control': 'public, max-age=300' } };
  },
});
