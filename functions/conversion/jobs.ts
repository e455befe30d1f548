import type { JobTable } from '../../shared/events/queue-worker.js';
import { renderThumbnailJob } from './render-thumbnail.js';

/** Jobs of the conversion worker, by message `type`. The uploads issue adds the file converters. */
export const conversionJobs: JobTable = {
  'render-thumbnail': renderThumbnailJob,
};
