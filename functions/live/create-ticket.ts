import { issueLiveTicket } from '../../shared/domain/live/service.js';
import { ok, operation } from '../../shared/http/route.js';
import { LiveTicketSchema } from './schemas.js';

export const createLiveTicketOperation = operation({
  operationId: 'createLiveTicket',
  summary: 'Get a live-update ticket',
  extension: true,
  description:
    'A WebSocket URL carrying a single-use ticket, valid 60 s, for live updates (no credential ever goes in a URL). Any credential: an API key, a session token or an exchange token. ' +
    'On the socket, send `{ "type": "subscribe", "markupId": "…", "after"?: SEQ }`; the answer is `{ "type": "subscribed", "markupId", "seq" }` (the markup\'s last seq), then ' +
    '`{ "type": "event", "markupId", "seq", "event" }` for every event of the markup, `event` being its webhook body, and `seq` counting the markup\'s events from 1 without gaps; ' +
    'with `after`, what the log holds after it comes first. A subscription is authorized like `GET /markups/{id}`; a refused one is `{ "type": "error", "markupId", "status", "detail" }`. ' +
    'A revoked or signed-out credential, or a deleted installation or end user, ends its connections (close code 4401).',
  auth: 'apiKey',
  permission: 'live:ticket',
  responses: [{ status: 200, description: 'The socket URL with its ticket', schema: LiveTicketSchema }],
  handle: async ({ principal }) => ok(await issueLiveTicket(principal)),
});
