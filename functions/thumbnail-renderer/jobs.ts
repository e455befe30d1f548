import type { JobTable } from '../../shared/events/queue-worker.js';
import { renderThumbnailJob } from './render-thumbnail.js';

export const thumbnailJobs: JobTable = {
  'render-thumbnail': renderThumbnailJob,
};
