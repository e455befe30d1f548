import { deleteWebhookRegistration } from '../../shared/domain/webhooks/registrations.js';
import { noContent, operation } from '../../shared/http/route.js';
import { WebhookRegistrationIdParams } from './schemas.js';

export const deleteWebhookRegistrationOperation = operation({
  operationId: 'deleteWebhookRegistration',
  summary: 'Delete a webhook registration',
  description: 'Nothing more is delivered to it.',
  auth: 'apiKey',
  permission: 'webhook:manage',
  params: WebhookRegistrationIdParams,
  responses: [{ status: 204, description: 'Deleted' }],
  handle: async ({ principal, params }) => {
    await deleteWebhookRegistration(principal, params.id);
    return noContent();
  },
});
