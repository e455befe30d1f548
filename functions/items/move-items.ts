import { authorizeMoveBatch, moveItems } from '../../shared/domain/items/move.js';
import { ok, operation } from '../../shared/http/route.js';
import { MoveItemsBody, MoveItemsResultSchema } from './schemas.js';

export const moveItemsOperation = operation({
  operationId: 'moveItems',
  summary: 'Move items',
  description:
    'Moves up to 50 items under `parentFolderId`; per-item failures are reported while the batch answers 200. ' +
    'Checked before anything moves: more than 50 items or an id listed twice (400); sources from several workspaces (400); ' +
    "parentFolderId unknown or a markup (404); destination or sources outside the key's scope, a workspace key moving into another " +
    'workspace, or a role below contributor (403). Then items move in the order listed; each failure goes to `errors` as ' +
    "`{ itemId, statusCode, message }`: 404 unknown item, 422 for the root or archive folder, a move into the item's own subfolder or " +
    'beyond the maximum depth, 409 when it changed meanwhile. Name clashes follow the single move.',
  auth: 'apiKey',
  permission: 'item:update',
  body: MoveItemsBody,
  responses: [{ status: 200, description: 'What moved and what did not', schema: MoveItemsResultSchema }],
  handle: async ({ principal, body }) => {
    const request = await authorizeMoveBatch(
      principal,
      body.parentFolderId,
      body.items.map((entry) => entry.id),
    );
    return ok(await moveItems(request, body.items));
  },
});
