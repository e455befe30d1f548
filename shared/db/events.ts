import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { queryPrefix } from './paging.js';

/** Event types of the spec (Events 1 and 3). */
export type EventType =
  | 'comment_created'
  | 'comment_updated'
  | 'comment_screenshot_failed'
  | 'comment_resolved'
  | 'comment_unresolved'
  | 'markup_created'
  | 'markup_ready'
  | 'comment_reply_created'
  | 'markup_status_changed'
  | 'set_project_read_only'
  | 'project_review_created';

export interface EventRecord {
  id: string;
  type: EventType;
  workspaceId: string;
  markupId?: string;
  /** Comment events: the thread, and the message when one was added or edited. */
  threadId?: string;
  messageId?: string;
  createdAt: string;
}

/** Events are kept 30 days: long enough for webhook deliveries and their retries. */
const RETENTION_SECONDS = 30 * 24 * 3600;

export const eventsPartition = (workspaceId: string) => `WS#${workspaceId}#EVENTS`;

/**
 * Records that something happened in a workspace (an outbox): the webhooks issue turns these into
 * signed deliveries. The id is the delivery's stable `webhook-id`.
 */
export async function recordEvent(event: Omit<EventRecord, 'id' | 'createdAt'>, at = new Date()): Promise<EventRecord> {
  const record: EventRecord = { id: randomUUID(), createdAt: at.toISOString(), ...event };
  await getDb().send(
    new PutCommand({
      TableName: getConfig().tableName,
      Item: {
        PK: eventsPartition(event.workspaceId),
        SK: `${record.createdAt}#${record.id}`,
        entity: 'Event',
        ...record,
        expiresAtEpoch: Math.floor(at.getTime() / 1000) + RETENTION_SECONDS,
      },
    }),
  );
  return record;
}

/** A workspace's recorded events, oldest first (tests and the webhooks issue). */
export async function listEvents(workspaceId: string): Promise<EventRecord[]> {
  return (await queryPrefix(eventsPartition(workspaceId))) as unknown as EventRecord[];
}
