import { deleteMarkups } from '../../shared/domain/markups/change.js';
import { noContent, operation } from '../../shared/http/route.js';
import { MarkupIdsBody } from './schemas.js';

export const bulkDeleteOperation = operation({
  operationId: 'bulkDeleteMarkups',
  summary: 'Delete markups',
  description: 'Deletes up to 50 markups; nothing is deleted when any id is not a markup the caller may delete.',
  auth: 'apiKey',
  permission: 'markup:delete',
  body: MarkupIdsBody,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, body }) => {
    await deleteMarkups(principal, body.markupIds);
    return noContent();
  },
});
