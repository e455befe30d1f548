import type { JobTable } from '../../shared/events/queue-worker.js';
import { locatePageElementsJob, renderPageScreenshotJob } from './render-page-screenshot.js';
import { renderThumbnailJob } from './render-thumbnail.js';

export const thumbnailJobs: JobTable = {
  'render-thumbnail': renderThumbnailJob,
  'render-page-screenshot': renderPageScreenshotJob,
  'locate-page-elements': locatePageElementsJob,
};
