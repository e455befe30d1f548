import { listMarkupEvents } from '../../shared/domain/markups/events.js';
import { okPage, operation } from '../../shared/http/route.js';
import { DEFAULT_PAGE_SIZE, MarkupEventPageSchema, MarkupEventsQuery, MarkupIdParams } from './schemas.js';

export const listMarkupEventsOperation = operation({
  operationId: 'listMarkupEvents',
  summary: "List a markup's events",
  description:
    "The markup's event log, oldest first: each entry is `{ seq, event }`, where `seq` counts the markup's events from 1 without gaps " +
    'and `event` is the webhook body (`{ id, type, workspaceId, createdAt, data }`, the same body webhooks and live updates carry). ' +
    '`after` (default 0) answers the entries with a greater `seq`; `limit` (default 50, at most 100). ' +
    "Next page: `after=<nextCursor>` (the last entry's `seq`). A client that reconnects to live updates reads what it missed here. Entries are kept 30 days.",
  extension: true,
  auth: 'apiKey',
  permission: 'markup:read',
  params: MarkupIdParams,
  query: MarkupEventsQuery,
  responses: [{ status: 200, description: "A page of the markup's events", schema: MarkupEventPageSchema }],
  handle: async ({ principal, params, query }) => {
    const page = await listMarkupEvents(principal, params.id, { after: query.after ?? 0, limit: query.limit ?? DEFAULT_PAGE_SIZE });
    return okPage(page.items, { hasMore: page.hasMore, nextCursor: page.nextCursor });
  },
});
