import { loadMarkup } from '../../shared/domain/markups/access.js';
import { listViewModes } from '../../shared/domain/markups/view-modes.js';
import { ok, operation } from '../../shared/http/route.js';
import { MarkupIdParams, ViewModeListSchema } from './schemas.js';

export const listViewModesOperation = operation({
  operationId: 'listMarkupViewModes',
  summary: 'List view modes',
  description: "The markup's device breakpoints (desktop, tablet, mobile) with the number of threads in each.",
  auth: 'apiKey',
  permission: 'markup:read',
  params: MarkupIdParams,
  responses: [{ status: 200, description: 'View modes', schema: ViewModeListSchema }],
  handle: async ({ principal, params }) => {
    await loadMarkup(principal, params.id);
    return ok({ projectViewModes: await listViewModes(params.id) });
  },
});
