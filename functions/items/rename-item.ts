import { loadItemForCaller } from '../../shared/domain/items/access.js';
import { renameItem } from '../../shared/domain/items/rename.js';
import { noContent, operation } from '../../shared/http/route.js';
import { NameBody } from '../../shared/http/schemas.js';
import { ItemParams } from './schemas.js';

export const renameItemOperation = operation({
  operationId: 'renameItem',
  summary: 'Rename an item',
  description:
    'Renames a folder or a markup. ' +
    'The workspace root and archive folders cannot be renamed (422). A folder cannot take the name of a sibling folder ' +
    '(case-insensitive): 409. Markups may share names. Contributors and above may rename.',
  auth: 'apiKey',
  permission: 'item:update',
  params: ItemParams,
  body: NameBody,
  responses: [{ status: 204, description: 'Renamed' }],
  handle: async ({ principal, params, body, ifMatch }) => {
    const access = await loadItemForCaller(principal, params.id, { consistent: true });
    await renameItem(access, body.name, ifMatch);
    return noContent();
  },
});
