import { loadItemForCaller } from '../../shared/domain/items/access.js';
import { deleteItem } from '../../shared/domain/items/delete.js';
import { noContent, operation } from '../../shared/http/route.js';
import { ItemParams } from './schemas.js';

export const deleteItemOperation = operation({
  operationId: 'deleteItem',
  summary: 'Delete an item',
  description:
    'Deletes a markup, or a folder with every folder and markup below it. ' +
    'The workspace root and archive folders cannot be deleted (422). Admins and above may delete. ' +
    'A folder is removed bottom-up (markups, then subfolders deepest first, then the folder), so if a very large tree is cut short ' +
    'the folder is still there and repeating the DELETE finishes it.',
  auth: 'apiKey',
  permission: 'item:delete',
  params: ItemParams,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, params, ifMatch }) => {
    const access = await loadItemForCaller(principal, params.id, { consistent: true });
    await deleteItem(access, ifMatch);
    return noContent();
  },
});
