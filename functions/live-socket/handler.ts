import { getConfig } from '../../shared/config.js';
import { handleLiveSocketEvent } from './socket.js';

getConfig();

/** The live-update WebSocket API's routes ($connect, $disconnect, $default). */
export const handler = handleLiveSocketEvent;
