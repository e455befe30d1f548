import { renameMarkup } from '../../shared/domain/markups/change.js';
import { itemVersion } from '../../shared/domain/items/read.js';
import { INCLUDE_ALL, toPublicMarkup } from '../../shared/domain/markups/view.js';
import { ok, operation } from '../../shared/http/route.js';
import { NameBody } from '../../shared/http/schemas.js';
import { MarkupIdParams, MarkupSchema } from './schemas.js';

export const renameMarkupOperation = operation({
  operationId: 'renameMarkup',
  summary: 'Rename a markup',
  auth: 'apiKey',
  permission: 'markup:rename',
  params: MarkupIdParams,
  body: NameBody,
  responses: [{ status: 200, description: 'The renamed markup', schema: MarkupSchema }],
  handle: async ({ principal, params, body, appUrl, ifMatch }) => {
    const { markup, role, plan } = await renameMarkup(principal, params.id, body.name, ifMatch);
    return ok(await toPublicMarkup(markup, { role, plan, appUrl, include: INCLUDE_ALL }), itemVersion(markup));
  },
});
