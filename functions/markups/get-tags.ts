import { loadMarkup } from '../../shared/domain/markups/access.js';
import { getMarkupTags } from '../../shared/domain/markups/tags.js';
import { ok, operation } from '../../shared/http/route.js';
import { MarkupIdParams, TagsSchema } from './schemas.js';

export const getTagsOperation = operation({
  operationId: 'getMarkupTags',
  summary: 'List who can be tagged',
  description: 'Who can be tagged on a markup (active workspace members; invitees have not joined) and who is tagged in its threads.',
  auth: 'apiKey',
  permission: 'markup:tags',
  params: MarkupIdParams,
  responses: [{ status: 200, description: 'Taggable and tagged users', schema: TagsSchema }],
  handle: async ({ principal, params }) => {
    const { markup } = await loadMarkup(principal, params.id);
    return ok(await getMarkupTags(markup));
  },
});
