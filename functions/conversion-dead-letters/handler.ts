import { getConfig } from '../../shared/config.js';
import { handleDeadLetters } from '../conversion/dead-letters.js';

getConfig();

/** Fed by the conversion queue's dead-letter queue (registry: `deadLetters: true`). */
export const handler = handleDeadLetters;
