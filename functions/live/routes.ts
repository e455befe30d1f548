import { routeTable } from '../../shared/http/route.js';
import { createLiveTicketOperation } from './create-ticket.js';

export const liveRoutes = routeTable({
  'POST /api/v2/live/tickets': createLiveTicketOperation,
});
