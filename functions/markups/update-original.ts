import { loadMarkup } from '../../shared/domain/markups/access.js';
import { toPublicMarkup } from '../../shared/domain/markups/view.js';
import { setRetainOriginal } from '../../shared/domain/markups/originals.js';
import { ok, operation } from '../../shared/http/route.js';
import { MarkupIdParams, MarkupSchema, RetainOriginalBody } from './schemas.js';

export const updateOriginalOperation = operation({
  operationId: 'updateOriginalRetention',
  summary: 'Keep or archive the original',
  description:
    "Keeps (`retainOriginal: true`, even under `NEVER_STORE`) or archives (`false`) the markup's original file. 400 when asked to retain an original that was already archived; 404 when the markup has no original file.",
  auth: 'apiKey',
  permission: 'original:manage',
  params: MarkupIdParams,
  body: RetainOriginalBody,
  responses: [{ status: 200, description: 'The markup', schema: MarkupSchema }],
  handle: async ({ principal, params, body, appUrl }) => {
    const { markup } = await loadMarkup(principal, params.id);
    await setRetainOriginal(markup, body.retainOriginal);
    const { markup: updated, role, plan } = await loadMarkup(principal, params.id, { consistent: true });
    return ok(await toPublicMarkup(updated, { role, plan, appUrl }));
  },
});
