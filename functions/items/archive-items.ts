import { loadItemsForCaller } from '../../shared/domain/items/access.js';
import { relocateItems } from '../../shared/domain/items/archive.js';
import { noContent, operation } from '../../shared/http/route.js';
import { ItemBatchBody } from './schemas.js';

export const archiveItemsOperation = operation({
  operationId: 'archiveItems',
  summary: 'Archive items',
  description:
    "Moves items into their workspace's archive folder. " +
    '`folderItemIds`: 1 to 50 folder or markup ids. All or nothing up front: an unknown id is a 404 for the whole request and an item ' +
    "outside the key's scope a 403, before anything moves; the root and archive folders are a 422. Items already in the archive, and items " +
    'listed together with a folder above them, stay where they are. The folder path an item came from is always remembered; ' +
    '`withPath=1` also re-creates it under the archive folder by names (reusing folders of the same name). A folder whose name is taken ' +
    'where it lands gets a numeric suffix. Contributors and above.',
  auth: 'apiKey',
  permission: 'item:update',
  body: ItemBatchBody,
  responses: [{ status: 204, description: 'Archived' }],
  handle: async ({ principal, body }) => {
    const items = await loadItemsForCaller(principal, body.folderItemIds);
    await relocateItems(items, 'archive', body.withPath);
    return noContent();
  },
});
