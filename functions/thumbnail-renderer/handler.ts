import { getConfig } from '../../shared/config.js';
import { createQueueWorker } from '../../shared/events/queue-worker.js';
import { thumbnailJobs } from './jobs.js';

getConfig();

/** Renders webpage thumbnails with headless Chromium (x86-64: the packed Lambda build is x64 only). */
export const handler = createQueueWorker('thumbnail-renderer', thumbnailJobs);
