import { loadWebhookRegistration, toPublicWebhookRegistration } from '../../shared/domain/webhooks/registrations.js';
import { ok, operation } from '../../shared/http/route.js';
import { WebhookRegistrationIdParams, WebhookRegistrationSchema } from './schemas.js';

export const getWebhookRegistrationOperation = operation({
  operationId: 'getWebhookRegistration',
  summary: 'Get a webhook registration',
  description: 'A webhook registration, with its signing key.',
  auth: 'apiKey',
  permission: 'webhook:read',
  params: WebhookRegistrationIdParams,
  responses: [{ status: 200, description: 'The registration', schema: WebhookRegistrationSchema }],
  handle: async ({ principal, params }) => ok(toPublicWebhookRegistration(await loadWebhookRegistration(principal, params.id))),
});
