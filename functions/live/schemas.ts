import * as v from 'valibot';

export const LiveTicketSchema = v.object({
  /** The socket to open, with its single-use ticket: `ws://127.0.0.1:PORT/api/v2/live?ticket=…` locally, the WebSocket API's `wss://…?ticket=…` deployed. */
  url: v.string(),
  /** When the ticket stops opening a connection (60 s after it was issued). */
  expiresAt: v.pipe(v.string(), v.isoTimestamp()),
});
