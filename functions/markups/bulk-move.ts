import { moveMarkups } from '../../shared/domain/markups/change.js';
import { noContent, operation } from '../../shared/http/route.js';
import { BulkMoveBody } from './schemas.js';

export const bulkMoveOperation = operation({
  operationId: 'bulkMoveMarkups',
  summary: 'Move markups',
  description:
    'Moves up to 50 markups of one workspace into a folder, all or nothing. Workspace keys move within their workspace; organization keys may move into another workspace of the organization.',
  auth: 'apiKey',
  permission: 'item:update',
  body: BulkMoveBody,
  responses: [{ status: 204, description: 'Moved' }],
  handle: async ({ principal, body }) => {
    await moveMarkups(principal, body.markupIds, body.targetFolderId);
    return noContent();
  },
});
