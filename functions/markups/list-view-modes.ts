import * as v from 'valibot';
import { loadMarkup } from '../../shared/domain/markups/access.js';
import { listViewModes } from '../../shared/domain/markups/view-modes.js';
import { ok, route } from '../../shared/http/route.js';
import { MarkupIdParams, ViewModeSchema } from './schemas.js';

export const listViewModesRoute = route({
  method: 'GET',
  path: '/api/v2/markups/{id}/view-modes',
  operationId: 'listMarkupViewModes',
  summary: "The markup's device breakpoints (desktop, tablet, mobile) with the number of threads in each",
  auth: 'apiKey',
  params: MarkupIdParams,
  responses: [{ status: 200, description: 'View modes', schema: v.array(ViewModeSchema) }],
  handle: async ({ principal, params }) => {
    await loadMarkup(principal, params.id);
    return ok(await listViewModes(params.id));
  },
});
