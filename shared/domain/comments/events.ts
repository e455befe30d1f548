import type { MarkupRecord } from '../../db/items.js';
import { recordEvent, type EventType } from '../../db/events.js';
import { logger } from '../../logger.js';

/** Records a comment event for webhooks; a failure is logged, never undoes the write. */
export async function recordCommentEvent(type: EventType, markup: MarkupRecord, ids: { threadId: string; messageId?: string }): Promise<void> {
  try {
    await recordEvent({ type, workspaceId: markup.workspaceId, markupId: markup.id, ...ids });
  } catch (error) {
    logger.error('comment event not recorded', { type, markupId: markup.id, ...ids, error });
  }
}
