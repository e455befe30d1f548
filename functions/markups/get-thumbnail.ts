import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getS3 } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getItem } from '../../shared/db/items.js';
import { NotFoundError } from '../../shared/http/errors.js';
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
    const markup = await getItem(params.id);
    if (!markup || markup.kind !== 'markup' || markup.thumbnailState !== 'ready' || !markup.thumbnailKey) {
      throw new NotFoundError('This markup has no rendered thumbnail.');
    }
    const object = await getS3().send(new GetObjectCommand({ Bucket: getConfig().bucketName, Key: markup.thumbnailKey }));
    const data = Buffer.from(await object.Body!.transformToByteArray());
    return { status: 200, binary: { data, contentType: 'image/png' }, headers: { 'Cache-Control': 'public, max-age=300' } };
  },
});
