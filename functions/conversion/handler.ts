import { getConfig } from '../../shared/config.js';
import { createQueueWorker } from '../../shared/events/queue-worker.js';
import { conversionJobs } from './jobs.js';

getConfig();

export const handler = createQueueWorker('conversion', conversionJobs);
