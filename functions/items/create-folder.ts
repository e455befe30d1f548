import { loadFolderForCaller } from '../../shared/domain/items/access.js';
import { createFolder, MAX_FOLDER_DEPTH } from '../../shared/domain/items/create.js';
import { EMPTY_FOLDER_COUNTS } from '../../shared/domain/items/views.js';
import { ok, operation } from '../../shared/http/route.js';
import { CreateFolderBody, ChildFolderSchema } from './schemas.js';

export const createFolderOperation = operation({
  operationId: 'createFolder',
  summary: 'Create a folder',
  description:
    'Creates a folder under `parentFolderId` and answers 200 with the folder. ' +
    'When a folder with the same name (case-insensitive) already exists under the parent, the new folder takes `fallbackName`, ' +
    'else the name with a numeric suffix (`Name (2)`, `Name (3)`, …); a clashing `fallbackName` is suffixed the same way. ' +
    `Folders nest at most ${MAX_FOLDER_DEPTH} levels below the workspace root (the root is level 0): deeper is a 422. ` +
    'The parent may be the archive folder. 404 when parentFolderId is unknown or names a markup; contributors and above may create folders.',
  auth: 'apiKey',
  permission: 'item:create',
  body: CreateFolderBody,
  responses: [{ status: 200, description: 'The new folder', schema: ChildFolderSchema }],
  handle: async ({ principal, body }) => {
    const parent = await loadFolderForCaller(principal, body.parentFolderId, { consistent: true });
    return ok({ ...(await createFolder(parent, { name: body.name, fallbackName: body.fallbackName })), ...EMPTY_FOLDER_COUNTS });
  },
});
