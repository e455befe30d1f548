import * as v from 'valibot';

export const LiveTicketSchema = v.object({
  /**
   * The socket to open, with its single-use ticket: `ws://127.0.0.1:PORT/api/v2/live?ticket=…` locally, the WebSocket API's
   * `wss://…?ticket=…` deployed.
   */
  url: v.pipe(v.string(), v.examples(['wss://live.review.example.com/live?ticket=q7Zt3vXk9bN2mW8pL4sR6yH1cJ5fD0gA-uE_iO3aT2w'])),
  /** When the ticket stops opening a connection (60 s after it was issued). */
  expiresAt: v.pipe(v.string(), v.isoTimestamp()),
});
