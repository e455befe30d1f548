import { loadItemForCaller } from '../../shared/domain/items/access.js';
import { finishMovesAround } from '../../shared/domain/items/pending-moves.js';
import { describeItem, itemVersion } from '../../shared/domain/items/read.js';
import { ok, operation } from '../../shared/http/route.js';
import { ItemParams, ItemSchema } from './schemas.js';

export const getItemOperation = operation({
  operationId: 'getItem',
  summary: 'Get an item',
  description:
    'A folder with its ancestors, or a markup (an item id is a markup id). ' +
    'A folder answers with its folder-item fields, `type: "folder"` and `ancestors` (folder items, the workspace root or archive folder first). ' +
    "A markup answers with the Markup shape of `GET /markups/{id}`. 404 for an unknown id, 403 for an item outside the key's workspace or organization.",
  auth: 'apiKey',
  permission: 'item:read',
  params: ItemParams,
  responses: [{ status: 200, description: 'The folder with its ancestors, or the markup', schema: ItemSchema }],
  handle: async ({ principal, params, appUrl }) => {
    let access = await loadItemForCaller(principal, params.id);
    // A move cut short after its commit shows its tree in two workspaces: reading it finishes it first.
    if (await finishMovesAround(access.item)) access = await loadItemForCaller(principal, params.id, { consistent: true });
    return ok(await describeItem(access, { appUrl }), itemVersion(access.item));
  },
});
