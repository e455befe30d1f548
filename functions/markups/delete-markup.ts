import { deleteMarkups } from '../../shared/domain/markups/change.js';
import { noContent, route } from '../../shared/http/route.js';
import { MarkupIdParams } from './schemas.js';

export const deleteMarkupRoute = route({
  method: 'DELETE',
  path: '/api/v2/markups/{id}',
  operationId: 'deleteMarkup',
  summary: 'Delete a markup (admin or above)',
  auth: 'apiKey',
  params: MarkupIdParams,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, params }) => {
    await deleteMarkups(principal, [params.id]);
    return noContent();
  },
});
