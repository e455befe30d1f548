import { listWebhookDeliveries, toPublicWebhookDelivery } from '../../shared/domain/webhooks/deliveries.js';
import { okPage, operation } from '../../shared/http/route.js';
import { DEFAULT_PAGE_SIZE, ListWebhookDeliveriesQuery, WebhookDeliveryPageSchema, WebhookRegistrationIdParams } from './schemas.js';

export const listWebhookDeliveriesOperation = operation({
  operationId: 'listWebhookDeliveries',
  summary: 'List webhook deliveries',
  description:
    "A registration's delivery log, newest first. " +
    "Each delivery attempt: event id and type, time, the receiver's status code or the error, duration and when the next retry is due. " +
    '`limit` (default 50, at most 100). Next page: `before=<nextCursor>`. Entries are kept 30 days.',
  extension: true,
  auth: 'apiKey',
  permission: 'webhook:read',
  params: WebhookRegistrationIdParams,
  query: ListWebhookDeliveriesQuery,
  responses: [{ status: 200, description: 'A page of delivery attempts', schema: WebhookDeliveryPageSchema }],
  handle: async ({ principal, params, query }) => {
    const page = await listWebhookDeliveries(principal, params.id, { limit: query.limit ?? DEFAULT_PAGE_SIZE, before: query.before });
    return okPage(page.items.map(toPublicWebhookDelivery), { hasMore: page.hasMore, nextCursor: page.nextCursor });
  },
});
