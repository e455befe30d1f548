import { toPublicWebhookRegistration, updateWebhookRegistration } from '../../shared/domain/webhooks/registrations.js';
import { ok, operation } from '../../shared/http/route.js';
import { UpdateWebhookRegistrationBody, WebhookRegistrationIdParams, WebhookRegistrationSchema } from './schemas.js';

export const updateWebhookRegistrationOperation = operation({
  operationId: 'updateWebhookRegistration',
  summary: 'Update a webhook registration',
  description:
    "Changes a registration's `url`, `eventTypes` or `enabled`. " +
    'Fields left out stay as they are; `eventTypes: null` goes back to every type. Events that happen while a registration is ' +
    'disabled are never delivered to it, not even after it is enabled again.',
  auth: 'apiKey',
  permission: 'webhook:manage',
  params: WebhookRegistrationIdParams,
  body: UpdateWebhookRegistrationBody,
  responses: [{ status: 200, description: 'The registration as changed', schema: WebhookRegistrationSchema }],
  handle: async ({ principal, params, body }) =>
    ok(toPublicWebhookRegistration(await updateWebhookRegistration(principal, params.id, body))),
});
