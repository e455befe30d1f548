import { getConfig } from '../../shared/config.js';
import { fanOut } from './fanout.js';

getConfig();

/** The table's stream (outbox inserts, filtered by the event source) into webhook delivery jobs. */
export const handler = fanOut;
