import type { DeliverableEvent } from '../db/events.js';

/**
 * The body of an event's deliveries, exactly the bytes that are signed and sent: `{ id, type,
 * workspaceId, createdAt, data: { markup, user, comment?, message? } }` (DESIGN.md "Webhook
 * deliveries"). Built once per event and stored, so every attempt and every registration gets the
 * same body.
 *
 * PLACEHOLDER (contract only): the envelope part of issue 12 replaces this with the full build
 * (markup with images, actor, public thread and message shapes) and the stored-once body.
 */
export async function eventBody(event: DeliverableEvent): Promise<string> {
  return JSON.stringify({ id: event.id, type: event.type, workspaceId: event.workspaceId, createdAt: event.createdAt, data: {} });
}
