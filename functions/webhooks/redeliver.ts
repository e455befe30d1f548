import { redeliverWebhookDelivery } from '../../shared/domain/webhooks/deliveries.js';
import { operation } from '../../shared/http/route.js';
import { QueuedWebhookEventSchema, WebhookDeliveryParams } from './schemas.js';

export const redeliverWebhookDeliveryOperation = operation({
  operationId: 'redeliverWebhookDelivery',
  summary: 'Redeliver a webhook',
  description:
    'Sends a logged delivery again. ' +
    "Queues one more attempt of the delivery log entry's message: the same `webhook-id` and body, signed with the current signing key, " +
    'with no retries after it. 404 for an entry of another registration; 409 while the registration is disabled (`webhook-registration-disabled`) ' +
    "or no longer subscribed to the event's type (`webhook-event-type-not-subscribed`).",
  extension: true,
  auth: 'apiKey',
  permission: 'webhook:manage',
  params: WebhookDeliveryParams,
  responses: [{ status: 202, description: 'The attempt is queued; its event', schema: QueuedWebhookEventSchema }],
  handle: async ({ principal, params }) => {
    const entry = await redeliverWebhookDelivery(principal, params.id, params.deliveryId);
    return { status: 202, body: { data: { eventId: entry.eventId, eventType: entry.eventType } } };
  },
});
