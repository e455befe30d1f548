import { eventItem, type EventType } from '../../db/events.js';
import type { MarkupRecord } from '../../db/items.js';
import type { TransactItem } from '../../db/core/transact.js';

/**
 * The outbox item of a comment event on `markup`, for the transaction that makes the change: the
 * event exists exactly when the change does. `userId` is the actor (the principal's User id);
 * undefined only for changes no principal caused (a worker's screenshot failure).
 */
export function commentEvent(
  type: EventType,
  markup: Pick<MarkupRecord, 'id' | 'workspaceId'>,
  ids: { threadId: string; messageId?: string },
  userId: string | undefined,
): TransactItem {
  return eventItem({ type, workspaceId: markup.workspaceId, markupId: markup.id, ...ids, ...(userId ? { userId } : {}) });
}
