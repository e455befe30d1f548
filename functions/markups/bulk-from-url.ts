import { createUrlMarkups } from '../../shared/domain/markups/create.js';
import { noContent, operation } from '../../shared/http/route.js';
import { BulkFromUrlBody } from './schemas.js';

export const bulkFromUrlOperation = operation({
  operationId: 'bulkCreateMarkupsFromUrl',
  summary: 'Create markups from URLs',
  description:
    'Creates up to 50 webpage markups in one workspace, all or nothing. Each item is `{ url, name?, parentFolderId?, workspaceId? }` with the defaults of POST /markups/url. 402 (nothing created) when the allowance and bundle cannot cover them all.',
  auth: 'apiKey',
  permission: 'markup:create',
  body: BulkFromUrlBody,
  responses: [{ status: 204, description: 'Created' }],
  handle: async ({ principal, body }) => {
    await createUrlMarkups(principal, body.items);
    return noContent();
  },
});
