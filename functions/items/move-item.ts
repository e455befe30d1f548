import { MAX_FOLDER_DEPTH } from '../../shared/domain/items/create.js';
import { authorizeMove, MAX_CARRIED_ITEMS, moveItem } from '../../shared/domain/items/move.js';
import { ok, operation } from '../../shared/http/route.js';
import { FolderItemSchema, ItemParams, MoveItemBody } from './schemas.js';

export const moveItemOperation = operation({
  operationId: 'moveItem',
  summary: 'Move an item',
  description:
    'Moves a folder or markup under `parentFolderId` and answers the moved item. ' +
    "The item keeps its id. 404: unknown item, or parentFolderId unknown or a markup. 403: either end outside the key's scope; a " +
    'workspace key moving into another workspace; a role below contributor. 422: moving the workspace root or archive folder; moving a ' +
    `folder into itself or its own subfolder; a move that would nest folders more than ${MAX_FOLDER_DEPTH} levels below the root ` +
    `(destination depth + 1 + height of the moved tree); a move within a workspace that would carry more than ${MAX_CARRIED_ITEMS} subfolders ` +
    'along: move the subfolders first. 409: the item was moved or deleted meanwhile; a folder still being moved into another workspace, ' +
    'or a move into or out of the tree below it, until that move is done (seconds). Crossing moves (X into Y while Y into X) never both ' +
    'succeed: the later one sees the new ancestry (422). A move that failed after it took effect is finished by repeating it (or by ' +
    'reading the item). A folder whose name is taken at the destination (case-insensitive) takes `fallbackName`, else a numeric suffix; ' +
    'markups keep their names. Organization keys may move into another workspace of the organization: everything below the item moves ' +
    'with it, carried by a worker after the answer (a tree of any size), and from the answer on every item of the tree answers to the ' +
    "destination's keys only. Moving an item to where it already is changes nothing.",
  auth: 'apiKey',
  permission: 'item:update',
  params: ItemParams,
  body: MoveItemBody,
  responses: [{ status: 200, description: 'The moved item', schema: FolderItemSchema }],
  handle: async ({ principal, params, body }) => {
    const request = await authorizeMove(principal, params.id, body.parentFolderId);
    return ok(await moveItem(request, body.fallbackName));
  },
});
