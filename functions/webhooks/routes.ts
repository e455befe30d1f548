import { idempotent, routeTable } from '../../shared/http/route.js';
import { createWebhookRegistrationOperation } from './create-registration.js';
import { deleteWebhookRegistrationOperation } from './delete-registration.js';
import { getWebhookRegistrationOperation } from './get-registration.js';
import { listWebhookDeliveriesOperation } from './list-deliveries.js';
import { listWebhookRegistrationsOperation } from './list-registrations.js';
import { redeliverWebhookDeliveryOperation } from './redeliver.js';
import { refreshSigningKeyOperation } from './refresh-signing-key.js';
import { sendWebhookTestOperation } from './send-test.js';
import { updateWebhookRegistrationOperation } from './update-registration.js';

export const webhooksRoutes = routeTable({
  'POST /api/v2/webhook-registrations': idempotent(createWebhookRegistrationOperation),
  'GET /api/v2/webhook-registrations': listWebhookRegistrationsOperation,
  'GET /api/v2/webhook-registrations/{id}': getWebhookRegistrationOperation,
  'POST /api/v2/webhook-registrations/{id}': updateWebhookRegistrationOperation,
  'POST /api/v2/webhook-registrations/{id}/refresh-signing-key': refreshSigningKeyOperation,
  'DELETE /api/v2/webhook-registrations/{id}': deleteWebhookRegistrationOperation,
  'GET /api/v2/webhook-registrations/{id}/deliveries': listWebhookDeliveriesOperation,
  'POST /api/v2/webhook-registrations/{id}/deliveries/{deliveryId}/redeliver': redeliverWebhookDeliveryOperation,
  'POST /api/v2/webhook-registrations/{id}/test': sendWebhookTestOperation,
});
