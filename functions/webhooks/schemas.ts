import * as v from 'valibot';
import { getConfig } from '../../shared/config.js';
import { checkWebhookUrl } from '../../shared/domain/webhooks/input.js';
import { Cursor, HttpUrl, Id, pageSchema, queryInteger } from '../../shared/http/schemas.js';
import { EventTypeSchema, WEBHOOK_EVENT_TYPES, WebhookDeliverySchema, WebhookRegistrationSchema } from '../../shared/schemas/webhooks.js';

export { QueuedWebhookEventSchema, WebhookDeliverySchema, WebhookRegistrationSchema } from '../../shared/schemas/webhooks.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

/** An http(s) URL of bounded length that the stack's mode admits as a delivery target (`checkWebhookUrl`). */
const WebhookUrl = v.pipe(
  HttpUrl,
  v.rawTransform<string, string>(({ dataset, addIssue, NEVER }) => {
    const checked = checkWebhookUrl(dataset.value, getConfig().mode);
    if ('problem' in checked) {
      addIssue({ message: checked.problem });
      return NEVER;
    }
    return checked.value;
  }),
);

/** Repeats are dropped; null or absent on create: every type. Bounded by the number of types (with room for repeats). */
const EventTypes = v.nullable(
  v.pipe(
    v.array(EventTypeSchema),
    v.maxLength(WEBHOOK_EVENT_TYPES.length * 4, `must list at most ${WEBHOOK_EVENT_TYPES.length * 4} event types`),
  ),
);

export const CreateWebhookRegistrationBody = v.object({
  workspaceId: v.optional(Id),
  url: WebhookUrl,
  eventTypes: v.optional(EventTypes),
  enabled: v.optional(v.boolean()),
});

export const UpdateWebhookRegistrationBody = v.object({
  url: v.optional(WebhookUrl),
  eventTypes: v.optional(EventTypes),
  enabled: v.optional(v.boolean()),
});

export const WebhookRegistrationIdParams = v.object({ id: Id });

export const ListWebhookRegistrationsQuery = v.object({
  workspaceId: v.optional(Id),
  limit: v.optional(queryInteger(1, MAX_PAGE_SIZE)),
  before: v.optional(Cursor),
});

/** GET /webhook-registrations pages forward only (`before=<nextCursor>`). */
export const WebhookRegistrationPageSchema = pageSchema(WebhookRegistrationSchema, { prevCursor: false });

export const WebhookDeliveryParams = v.object({ id: Id, deliveryId: Id });

export const ListWebhookDeliveriesQuery = v.object({
  limit: v.optional(queryInteger(1, MAX_PAGE_SIZE)),
  before: v.optional(Cursor),
});

/** GET /webhook-registrations/:id/deliveries pages forward only (`before=<nextCursor>`). */
export const WebhookDeliveryPageSchema = pageSchema(WebhookDeliverySchema, { prevCursor: false });
