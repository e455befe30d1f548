import { conditional, idempotent, routeTable } from '../../shared/http/route.js';
import { bulkDeleteOperation } from './bulk-delete.js';
import { bulkFromFilesOperation } from './bulk-from-files.js';
import { bulkFromUrlOperation } from './bulk-from-url.js';
import { bulkMoveOperation } from './bulk-move.js';
import { createFromFileOperation } from './create-from-file.js';
import { createFromFilesOperation } from './create-from-files.js';
import { createFromUrlOperation } from './create-from-url.js';
import { deleteMarkupOperation } from './delete-markup.js';
import { deleteOriginalOperation } from './delete-original.js';
import { getMarkupOperation } from './get-markup.js';
import { getPageLayoutOperation } from './get-page-layout.js';
import { getOriginalDownloadUrlOperation } from './get-original-download-url.js';
import { updateOriginalOperation } from './update-original.js';
import { getTagsOperation } from './get-tags.js';
import { getThumbnailOperation } from './get-thumbnail.js';
import { getUsageOperation } from './get-usage.js';
import { listMarkupEventsOperation } from './list-markup-events.js';
import { listMarkupsOperation } from './list-markups.js';
import { listViewModesOperation } from './list-view-modes.js';
import { renameMarkupOperation } from './rename-markup.js';
import { searchMarkupsOperation } from './search-markups.js';
import { setReadOnlyOperation } from './set-read-only.js';

/**
 * Literal paths (`/markups/usage`, `/markups/search`, `/markups/url`, `/markups/file`, `/markups/from-files`, `/markups/bulk/...`) sit
 * beside
 * `/markups/{id}`; API Gateway and the local gateway both prefer the more literal template, and
 * `{id}` only accepts UUIDs, so a mistyped literal is a 400, never another markup.
 */
export const markupsRoutes = routeTable({
  'POST /api/v2/markups/url': idempotent(createFromUrlOperation),
  'POST /api/v2/markups/from-files': idempotent(createFromFilesOperation),
  'POST /api/v2/markups/file': idempotent(createFromFileOperation),
  'GET /api/v2/markups': listMarkupsOperation,
  'GET /api/v2/markups/search': searchMarkupsOperation,
  'GET /api/v2/markups/usage': getUsageOperation,
  'GET /api/v2/markups/{id}': conditional(getMarkupOperation),
  'POST /api/v2/markups/{id}': conditional(renameMarkupOperation),
  'DELETE /api/v2/markups/{id}': conditional(deleteMarkupOperation),
  'PATCH /api/v2/markups/{id}/read-only': conditional(setReadOnlyOperation),
  'GET /api/v2/markups/{id}/events': listMarkupEventsOperation,
  'GET /api/v2/markups/{id}/tag': getTagsOperation,
  'GET /api/v2/markups/{id}/view-modes': listViewModesOperation,
  'GET /api/v2/markups/{id}/thumbnail': getThumbnailOperation,
  'GET /api/v2/markups/{id}/page-screenshots/{viewModeId}/layout': getPageLayoutOperation,
  'GET /api/v2/markups/{id}/original/download-url': getOriginalDownloadUrlOperation,
  'PATCH /api/v2/markups/{id}/original': updateOriginalOperation,
  'DELETE /api/v2/markups/{id}/original': deleteOriginalOperation,
  'POST /api/v2/markups/bulk/from-url': idempotent(bulkFromUrlOperation),
  'POST /api/v2/markups/bulk/move': bulkMoveOperation,
  'POST /api/v2/markups/bulk/delete': bulkDeleteOperation,
  'POST /api/v2/markups/bulk/from-files': bulkFromFilesOperation,
});
