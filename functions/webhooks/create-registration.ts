import { createWebhookRegistration, toPublicWebhookRegistration } from '../../shared/domain/webhooks/registrations.js';
import { ok, operation } from '../../shared/http/route.js';
import { CreateWebhookRegistrationBody, WebhookRegistrationSchema } from './schemas.js';

export const createWebhookRegistrationOperation = operation({
  operationId: 'createWebhookRegistration',
  summary: 'Register a webhook',
  description:
    "Registers a URL to receive the workspace's events, signed with the registration's `signingKey`. " +
    '`url` must be https (the local stack also takes http to a loopback host); addresses that are private, loopback, link-local ' +
    'or metadata are refused. `eventTypes` omitted or null: every event type, including types added later (answered as the full ' +
    "list); repeats are dropped. `enabled` defaults to true. `workspaceId` defaults to a workspace key's own; organization keys " +
    'must pass it. `signingKey` (`whsec_<base64>`) verifies the Standard Webhooks signature of each delivery. A workspace has at ' +
    'most 25 registrations (409 `webhook-registration-limit`).',
  auth: 'apiKey',
  permission: 'webhook:manage',
  body: CreateWebhookRegistrationBody,
  responses: [{ status: 200, description: 'The new registration', schema: WebhookRegistrationSchema }],
  handle: async ({ principal, body }) => ok(toPublicWebhookRegistration(await createWebhookRegistration(principal, body))),
});
