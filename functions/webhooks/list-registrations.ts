import { listWebhookRegistrations, toPublicWebhookRegistration } from '../../shared/domain/webhooks/registrations.js';
import { okPage, operation } from '../../shared/http/route.js';
import { DEFAULT_PAGE_SIZE, ListWebhookRegistrationsQuery, WebhookRegistrationPageSchema } from './schemas.js';

export const listWebhookRegistrationsOperation = operation({
  operationId: 'listWebhookRegistrations',
  summary: 'List webhook registrations',
  description:
    "The workspace's webhook registrations, newest first. " +
    "`workspaceId` defaults to a workspace key's own workspace; organization keys must pass it. `limit` (default 50, at most 100). " +
    'Next page: `before=<nextCursor>`.',
  auth: 'apiKey',
  permission: 'webhook:read',
  query: ListWebhookRegistrationsQuery,
  responses: [{ status: 200, description: 'A page of registrations', schema: WebhookRegistrationPageSchema }],
  handle: async ({ principal, query }) => {
    const page = await listWebhookRegistrations(principal, {
      workspaceId: query.workspaceId,
      limit: query.limit ?? DEFAULT_PAGE_SIZE,
      before: query.before,
    });
    return okPage(page.items.map(toPublicWebhookRegistration), { hasMore: page.hasMore, nextCursor: page.nextCursor });
  },
});
