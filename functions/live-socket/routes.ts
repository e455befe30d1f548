/** The routes of the live-update WebSocket API (DESIGN.md "Live updates"), all handled by the live-socket function. */
export const LIVE_SOCKET_ROUTES = ['$connect', '$disconnect', '$default'] as const;

export type LiveSocketRoute = (typeof LIVE_SOCKET_ROUTES)[number];
