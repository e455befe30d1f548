import { refreshWebhookSigningKey, toPublicWebhookRegistration } from '../../shared/domain/webhooks/registrations.js';
import { ok, operation } from '../../shared/http/route.js';
import { WebhookRegistrationIdParams, WebhookRegistrationSchema } from './schemas.js';

export const refreshSigningKeyOperation = operation({
  operationId: 'refreshWebhookSigningKey',
  summary: 'Replace the signing key',
  description:
    "Replaces a registration's signing key. Every later delivery attempt, retries of older events included, is signed with the new key only.",
  auth: 'apiKey',
  permission: 'webhook:manage',
  params: WebhookRegistrationIdParams,
  responses: [{ status: 200, description: 'The registration with its new signingKey', schema: WebhookRegistrationSchema }],
  handle: async ({ principal, params }) => ok(toPublicWebhookRegistration(await refreshWebhookSigningKey(principal, params.id))),
});
