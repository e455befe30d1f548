import { loadItemsForCaller } from '../../shared/domain/items/access.js';
import { relocateItems } from '../../shared/domain/items/archive.js';
import { noContent, operation } from '../../shared/http/route.js';
import { ItemBatchBody } from './schemas.js';

export const restoreItemsOperation = operation({
  operationId: 'restoreItems',
  summary: 'Restore items',
  description:
    'Moves archived items back to the workspace root. ' +
    '`folderItemIds`: 1 to 50 ids; unknown ids are a 404 and out-of-scope items a 403 for the whole request, before anything moves. ' +
    'Items not in the archive, and items listed together with a folder above them, stay where they are. `withPath=1` puts each item back ' +
    'under the folder path it was archived from, re-creating missing folders by name (a 422 if that would nest folders too deep); ' +
    'otherwise it goes to the root. A folder whose name is taken where it lands gets a numeric suffix. Contributors and above.',
  auth: 'apiKey',
  permission: 'item:update',
  body: ItemBatchBody,
  responses: [{ status: 204, description: 'Restored' }],
  handle: async ({ principal, body }) => {
    const items = await loadItemsForCaller(principal, body.folderItemIds);
    await relocateItems(items, 'restore', body.withPath);
    return noContent();
  },
});
