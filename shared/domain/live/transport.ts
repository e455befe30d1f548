import { getConfig } from '../../config.js';
import { connectionsApiTransport } from './connections-api.js';
import type { LiveTransport } from './service.js';

let localTransport: LiveTransport | undefined;

/** The local stack's gateway hands its sockets over here (undefined: it stopped). */
export function useLocalLiveTransport(transport: LiveTransport | undefined): void {
  localTransport = transport;
}

/** Where live messages go: API Gateway's connections deployed, the local gateway's sockets in the local stack. */
export function liveTransport(): LiveTransport {
  if (getConfig().mode !== 'local') return connectionsApiTransport;
  if (!localTransport) throw new Error('The local gateway has no live-update sockets (it is not started).');
  return localTransport;
}
