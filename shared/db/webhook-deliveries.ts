import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import type { DeliverableEvent } from './events.js';
import { isConditionFailure } from './core/errors.js';
import { queryPage, type Page } from './core/paging.js';
import { TABLE } from './core/table.js';
import { updateIfConditionHolds } from './core/transact.js';
import { isTimeOrderedId } from './core/ids.js';

/**
 * One attempt of delivering one event to one registration: an entry of the delivery log
 * (`GET /webhook-registrations/:id/deliveries`). `event` and `attempt` are what a redelivery repeats.
 */
export interface DeliveryAttemptRecord {
  /** A UUID (version 7): entries sort by attempt time under their registration. */
  id: string;
  registrationId: string;
  eventId: string;
  eventType: DeliverableEvent['type'];
  /** ISO 8601, like the registration's own times. */
  attemptedAt: string;
  /** The receiver's HTTP status; null when no answer came (timeout, refused address, connection error). */
  statusCode: number | null;
  /** Why the attempt failed without a status, or null. */
  error: string | null;
  durationMs: number;
  /** When the next attempt of this event is due (ISO 8601), or null: delivered, given up, a redelivery, or the retry was dropped. */
  nextRetryAt: string | null;
  event: DeliverableEvent;
  attempt: number;
}

/** The log is kept as long as events are (30 days). */
const RETENTION_SECONDS = 30 * 24 * 3600;

/** A registration's delivery log: its own partition, so listing it never reads the registration item. */
export const deliveriesPartition = (registrationId: string) => `WEBHOOK#${registrationId}#DELIVERIES`;
const deliveryKey = (registrationId: string, id: string) => ({ PK: deliveriesPartition(registrationId), SK: id });

/** Appends an attempt to the log (the id is new, so a retried put writes the same entry). */
export async function recordDeliveryAttempt(record: DeliveryAttemptRecord): Promise<void> {
  const expires = Math.floor(Date.parse(record.attemptedAt) / 1000) + RETENTION_SECONDS;
  await getDb().send(
    new PutCommand({
      TableName: getConfig().tableName,
      Item: { ...deliveryKey(record.registrationId, record.id), entity: 'WebhookDelivery', ...record, [TABLE.ttlAttribute]: expires },
    }),
  );
}

function fromItem(item: Record<string, unknown>): DeliveryAttemptRecord {
  const { PK: _pk, SK: _sk, entity: _entity, [TABLE.ttlAttribute]: _ttl, ...record } = item;
  return record as unknown as DeliveryAttemptRecord;
}

/** Says on a log entry that no further attempt is coming (the retry it announced was dropped); nothing when the entry is gone. */
export async function clearNextRetry(registrationId: string, id: string): Promise<void> {
  await updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: deliveryKey(registrationId, id),
    UpdateExpression: 'SET nextRetryAt = :none',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeValues: { ':none': null },
  });
}

/** One entry of a registration's log, or undefined (unknown id, or one of another registration). */
export async function getDeliveryAttempt(registrationId: string, id: string): Promise<DeliveryAttemptRecord | undefined> {
  if (!isTimeOrderedId(id)) return undefined;
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: deliveryKey(registrationId, id), ConsistentRead: true }),
  );
  return result.Item ? fromItem(result.Item) : undefined;
}

/** One page of a registration's log, newest first (next page: `before=<nextCursor>`). */
export async function listDeliveryAttempts(
  registrationId: string,
  page: { limit: number; before?: string },
): Promise<Page<DeliveryAttemptRecord>> {
  return queryPage(
    {
      list: 'webhook-deliveries',
      partitionValue: deliveriesPartition(registrationId),
      ascending: false,
      limit: page.limit,
      before: page.before,
    },
    fromItem,
  );
}

/** Who continues a delivery after an attempt: one claim per (registration, event, attempt). */
const continuationKey = (registrationId: string, eventId: string, attempt: number) => ({
  PK: `DELIVERY#${registrationId}#${eventId}`,
  SK: `AFTER#${attempt}`,
});

/**
 * Claims the right to continue a delivery after `attempt` (queue the next attempt, or the dead
 * letter) for the queue message `messageId`. True for the first claimant, and again for the same
 * message processed anew before its continuation was queued (SQS redelivers a message whose
 * processing died, keeping its id: that processing may not have queued it); false once it was
 * queued (`markContinuationQueued`) and for any other message, such as a duplicate chain, which
 * then stops. Retry chains never fork, except by a death between queuing and marking.
 */
export async function claimContinuation(registrationId: string, eventId: string, attempt: number, messageId: string): Promise<boolean> {
  const expires = Math.floor(Date.now() / 1000) + RETENTION_SECONDS;
  try {
    await getDb().send(
      new PutCommand({
        TableName: getConfig().tableName,
        Item: {
          ...continuationKey(registrationId, eventId, attempt),
          entity: 'DeliveryContinuation',
          messageId,
          [TABLE.ttlAttribute]: expires,
        },
        ConditionExpression: 'attribute_not_exists(PK) OR (messageId = :mine AND attribute_not_exists(queuedAt))',
        ExpressionAttributeValues: { ':mine': messageId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Records that the claimed continuation is on its queue: a redelivered message then stops at its claim. */
export async function markContinuationQueued(registrationId: string, eventId: string, attempt: number): Promise<void> {
  await getDb().send(
    new UpdateCommand({
      TableName: getConfig().tableName,
      Key: continuationKey(registrationId, eventId, attempt),
      UpdateExpression: 'SET queuedAt = :now',
      ExpressionAttributeValues: { ':now': new Date().toISOString() },
    }),
  );
}
