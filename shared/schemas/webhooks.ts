import * as v from 'valibot';
import { Id } from './builders.js';

/**
 * Every event type a registration may name (spec Events; DESIGN "Which operation emits which
 * event"), in the spec's order; `shared/domain/webhooks/input.ts` checks it against the events the
 * service records.
 */
export const WEBHOOK_EVENT_TYPES = [
  'comment_created',
  'comment_updated',
  'comment_screenshot_failed',
  'comment_resolved',
  'comment_unresolved',
  'markup_created',
  'markup_ready',
  'comment_reply_created',
  'markup_status_changed',
  'set_project_read_only',
  'project_review_created',
] as const;

export const EventTypeSchema = v.picklist(WEBHOOK_EVENT_TYPES, `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);

/** The spec's Webhook registration. `eventTypes` lists every type when the registration receives every type. */
export const WebhookRegistrationSchema = v.object({
  id: Id,
  createdAt: v.string(),
  modifiedAt: v.string(),
  deletedAt: v.null(),
  url: v.string(),
  workspaceId: Id,
  eventTypes: v.array(EventTypeSchema),
  enabled: v.boolean(),
  signingKey: v.string(),
});

/** What a delivery may carry: a registration's event types, and the test event. */
export const DeliverableEventTypeSchema = v.union([EventTypeSchema, v.literal('webhook.test')]);

/** An entry of `GET /webhook-registrations/:id/deliveries` (DESIGN.md "Webhook deliveries"). */
export const WebhookDeliverySchema = v.object({
  id: Id,
  eventId: Id,
  eventType: DeliverableEventTypeSchema,
  attemptedAt: v.string(),
  statusCode: v.nullable(v.number()),
  error: v.nullable(v.string()),
  durationMs: v.number(),
  nextRetryAt: v.nullable(v.string()),
});

/** What redeliver and test answer: the event that is on its way (its id is the `webhook-id` header). */
export const QueuedWebhookEventSchema = v.object({ eventId: Id, eventType: DeliverableEventTypeSchema });

export type WebhookRegistrationView = v.InferOutput<typeof WebhookRegistrationSchema>;
export type WebhookDeliveryView = v.InferOutput<typeof WebhookDeliverySchema>;
export type QueuedWebhookEventView = v.InferOutput<typeof QueuedWebhookEventSchema>;
