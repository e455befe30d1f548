import type { AnyRoute } from '../../shared/http/route.js';
import { bulkDeleteRoute } from './bulk-delete.js';
import { bulkFromFilesRoute } from './bulk-from-files.js';
import { bulkFromUrlRoute } from './bulk-from-url.js';
import { bulkMoveRoute } from './bulk-move.js';
import { createFromFileRoute } from './create-from-file.js';
import { createFromFilesRoute } from './create-from-files.js';
import { createFromUrlRoute } from './create-from-url.js';
import { deleteMarkupRoute } from './delete-markup.js';
import { deleteOriginalRoute } from './delete-original.js';
import { getMarkupRoute } from './get-markup.js';
import { getOriginalDownloadUrlRoute } from './get-original-download-url.js';
import { updateOriginalRoute } from './update-original.js';
import { getTagsRoute } from './get-tags.js';
import { getThumbnailRoute } from './get-thumbnail.js';
import { getUsageRoute } from './get-usage.js';
import { listMarkupsRoute } from './list-markups.js';
import { listViewModesRoute } from './list-view-modes.js';
import { renameMarkupRoute } from './rename-markup.js';
import { searchMarkupsRoute } from './search-markups.js';
import { setReadOnlyRoute } from './set-read-only.js';

/**
 * Literal paths (`/markups/usage`, `/markups/search`, `/markups/url`, `/markups/file`, `/markups/from-files`, `/markups/bulk/...`) sit beside
 * `/markups/{id}`; API Gateway and the local gateway both prefer the more literal template, and
 * `{id}` only accepts UUIDs, so a mistyped literal is a 400, never another markup.
 */
export const markupsRoutes: readonly AnyRoute[] = [
  createFromUrlRoute,
  createFromFilesRoute,
  createFromFileRoute,
  listMarkupsRoute,
  searchMarkupsRoute,
  getUsageRoute,
  getMarkupRoute,
  renameMarkupRoute,
  deleteMarkupRoute,
  setReadOnlyRoute,
  getTagsRoute,
  listViewModesRoute,
  getThumbnailRoute,
  getOriginalDownloadUrlRoute,
  updateOriginalRoute,
  deleteOriginalRoute,
  bulkFromUrlRoute,
  bulkMoveRoute,
  bulkDeleteRoute,
  bulkFromFilesRoute,
];
