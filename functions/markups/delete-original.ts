import { loadMarkup } from '../../shared/domain/markups/access.js';
import { archiveMarkupOriginal } from '../../shared/domain/markups/originals.js';
import { ok, operation } from '../../shared/http/route.js';
import { ArchivedOriginalSchema, MarkupIdParams } from './schemas.js';

export const deleteOriginalOperation = operation({
  operationId: 'archiveOriginal',
  summary: 'Archive the original',
  description:
    "Archives the markup's retained original: its bytes stop counting at once and the file is queued for deletion. 404 when the markup has no retained original.",
  auth: 'apiKey',
  permission: 'original:manage',
  params: MarkupIdParams,
  responses: [{ status: 200, description: 'The size of the archived file', schema: ArchivedOriginalSchema }],
  handle: async ({ principal, params }) => {
    const { markup } = await loadMarkup(principal, params.id);
    return ok(await archiveMarkupOriginal(markup));
  },
});
