import { deleteMarkups } from '../../shared/domain/markups/change.js';
import { noContent, operation } from '../../shared/http/route.js';
import { MarkupIdParams } from './schemas.js';

export const deleteMarkupOperation = operation({
  operationId: 'deleteMarkup',
  summary: 'Delete a markup',
  auth: 'apiKey',
  permission: 'markup:delete',
  params: MarkupIdParams,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, params, ifMatch }) => {
    await deleteMarkups(principal, [params.id], ifMatch);
    return noContent();
  },
});
