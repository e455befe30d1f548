import type { JobTable } from '../../shared/events/queue-worker.js';
import { archiveOriginalsJob } from './archive-originals.js';
import { convertMarkupJob } from './convert-markup.js';
import { deleteMarkupObjectsJob, deleteObjectsJob } from './delete-objects.js';
import { deleteWorkspaceContentJob } from './delete-workspace-content.js';
import { screenshotThumbnailJob } from './screenshot-thumbnail.js';

/**
 * Jobs of the conversion worker, by message `type`. (Webpage thumbnails have their own x86-64
 * worker: functions/thumbnail-renderer.)
 */
export const conversionJobs: JobTable = {
  'archive-originals': archiveOriginalsJob,
  'convert-markup': convertMarkupJob,
  'delete-markup-objects': deleteMarkupObjectsJob,
  'delete-objects': deleteObjectsJob,
  'delete-workspace-content': deleteWorkspaceContentJob,
  'screenshot-thumbnail': screenshotThumbnailJob,
};
