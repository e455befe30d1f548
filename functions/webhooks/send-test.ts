import { sendWebhookTest } from '../../shared/domain/webhooks/deliveries.js';
import { operation } from '../../shared/http/route.js';
import { QueuedWebhookEventSchema, WebhookRegistrationIdParams } from './schemas.js';

export const sendWebhookTestOperation = operation({
  operationId: 'sendWebhookTest',
  summary: 'Send a test event',
  description:
    'Sends a signed `webhook.test` event. ' +
    'Queues a new `webhook.test` event, caused by the caller, to the registration: signed, retried and logged in its deliveries like any ' +
    'event, whatever its `eventTypes`. 409 while the registration is disabled.',
  extension: true,
  auth: 'apiKey',
  permission: 'webhook:manage',
  params: WebhookRegistrationIdParams,
  responses: [{ status: 202, description: 'The test event is queued', schema: QueuedWebhookEventSchema }],
  handle: async ({ principal, params }) => {
    const event = await sendWebhookTest(principal, params.id);
    return { status: 202, body: { data: { eventId: event.id, eventType: event.type } } };
  },
});
