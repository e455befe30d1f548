import { CONVERSION_LIMITS, CONVERSION_LIMITS_DESCRIPTION } from '../../shared/convert/limits.js';
import { loadMarkup } from '../../shared/domain/markups/access.js';
import { itemVersion } from '../../shared/domain/items/read.js';
import { INCLUDE_ALL, toPublicMarkup } from '../../shared/domain/markups/view.js';
import { ok, operation } from '../../shared/http/route.js';
import { MarkupIdParams, MarkupSchema } from './schemas.js';

export const getMarkupOperation = operation({
  operationId: 'getMarkup',
  summary: 'Get a markup',
  description:
    'One markup, with its files. ' +
    `\`images\` and \`document.pages\` hold at most ${CONVERSION_LIMITS.maxPages} entries each (the conversion page limit), so the answer stays bounded. ${CONVERSION_LIMITS_DESCRIPTION}`,
  auth: 'apiKey',
  permission: 'markup:read',
  params: MarkupIdParams,
  responses: [{ status: 200, description: 'The markup', schema: MarkupSchema }],
  handle: async ({ principal, params, appUrl }) => {
    const { markup, role, plan } = await loadMarkup(principal, params.id);
    return ok(await toPublicMarkup(markup, { role, plan, appUrl, include: INCLUDE_ALL }), itemVersion(markup));
  },
});
