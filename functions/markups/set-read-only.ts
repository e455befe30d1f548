import { setMarkupReadOnly } from '../../shared/domain/markups/change.js';
import { itemVersion } from '../../shared/domain/items/read.js';
import { INCLUDE_ALL, toPublicMarkup } from '../../shared/domain/markups/view.js';
import { ok, operation } from '../../shared/http/route.js';
import { MarkupIdParams, MarkupSchema, ReadOnlyBody } from './schemas.js';

export const setReadOnlyOperation = operation({
  operationId: 'setMarkupReadOnly',
  summary: 'Pause or resume comments',
  description: 'Pauses (`readOnly: true`, needs the plan feature) or resumes new comments on a markup.',
  auth: 'apiKey',
  permission: 'markup:read-only',
  params: MarkupIdParams,
  body: ReadOnlyBody,
  responses: [{ status: 200, description: 'The markup', schema: MarkupSchema }],
  handle: async ({ principal, params, body, appUrl, ifMatch }) => {
    const { markup, role, plan } = await setMarkupReadOnly(principal, params.id, body.readOnly, ifMatch);
    return ok(await toPublicMarkup(markup, { role, plan, appUrl, include: INCLUDE_ALL }), itemVersion(markup));
  },
});
