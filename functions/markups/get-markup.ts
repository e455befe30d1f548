import { loadMarkup } from '../../shared/domain/markups/access.js';
import { INCLUDE_ALL, toPublicMarkup } from '../../shared/domain/markup-view.js';
import { ok, operation } from '../../shared/http/route.js';
import { MarkupIdParams, MarkupSchema } from './schemas.js';

export const getMarkupOperation = operation({
  operationId: 'getMarkup',
  summary: 'One markup, with its files',
  auth: 'apiKey',
  permission: 'markup:read',
  params: MarkupIdParams,
  responses: [{ status: 200, description: 'The markup', schema: MarkupSchema }],
  handle: async ({ principal, params, origin, appUrl }) => {
    const { markup, role, plan } = await loadMarkup(principal, params.id);
    return ok(await toPublicMarkup(markup, { role, plan, origin, appUrl, include: INCLUDE_ALL }));
  },
});
