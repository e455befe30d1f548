import type { AnyRoute } from '../../shared/http/route.js';
import { archiveItemsRoute } from './archive-items.js';
import { createFolderRoute } from './create-folder.js';
import { deleteItemRoute } from './delete-item.js';
import { getItemRoute } from './get-item.js';
import { listChildItemsRoute } from './list-child-items.js';
import { moveItemRoute } from './move-item.js';
import { moveItemsRoute } from './move-items.js';
import { renameItemRoute } from './rename-item.js';
import { restoreItemsRoute } from './restore-items.js';

export const itemsRoutes: readonly AnyRoute[] = [
  getItemRoute,
  listChildItemsRoute,
  createFolderRoute,
  archiveItemsRoute,
  restoreItemsRoute,
  moveItemsRoute,
  moveItemRoute,
  renameItemRoute,
  deleteItemRoute,
];
