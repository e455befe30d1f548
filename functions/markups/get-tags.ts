import { loadMarkup } from '../../shared/domain/markups/access.js';
import { getMarkupTags } from '../../shared/domain/markups/tags.js';
import { ok, route } from '../../shared/http/route.js';
import { MarkupIdParams, TagsSchema } from './schemas.js';

export const getTagsRoute = route({
  method: 'GET',
  path: '/api/v2/markups/{id}/tag',
  operationId: 'getMarkupTags',
  summary: 'Who can be tagged on a markup (the workspace members) and who is tagged in its threads',
  auth: 'apiKey',
  params: MarkupIdParams,
  responses: [{ status: 200, description: 'Taggable and tagged users', schema: TagsSchema }],
  handle: async ({ principal, params }) => {
    const { markup } = await loadMarkup(principal, params.id);
    return ok(await getMarkupTags(markup));
  },
});
