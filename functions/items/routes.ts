import { conditional, idempotent, routeTable } from '../../shared/http/route.js';
import { archiveItemsOperation } from './archive-items.js';
import { createFolderOperation } from './create-folder.js';
import { deleteItemOperation } from './delete-item.js';
import { getItemOperation } from './get-item.js';
import { listChildItemsOperation } from './list-child-items.js';
import { moveItemOperation } from './move-item.js';
import { moveItemsOperation } from './move-items.js';
import { renameItemOperation } from './rename-item.js';
import { restoreItemsOperation } from './restore-items.js';

export const itemsRoutes = routeTable({
  'GET /api/v2/items/{id}': conditional(getItemOperation),
  'GET /api/v2/items/{id}/items': listChildItemsOperation,
  'POST /api/v2/items': idempotent(createFolderOperation),
  'PATCH /api/v2/items/archive': archiveItemsOperation,
  'PATCH /api/v2/items/restore': restoreItemsOperation,
  'PATCH /api/v2/items/move': moveItemsOperation,
  'PATCH /api/v2/items/{id}/move': moveItemOperation,
  'PATCH /api/v2/items/{id}': conditional(renameItemOperation),
  'DELETE /api/v2/items/{id}': conditional(deleteItemOperation),
});
