import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { isConditionFailure } from './core/errors.js';
import type { EventType } from './events.js';
import { queryAll, queryPage, type Page } from './core/paging.js';
import { SORT_SEPARATOR, recordOf } from './core/table.js';
import { batchDelete, putNew, tryTransact } from './core/transact.js';
import { workspaceKey } from './workspaces.js';

/** A webhook registration (spec "Webhook registration"): where a workspace's events are delivered, signed with `signingKey`. */
export interface WebhookRegistrationRecord {
  id: string;
  organizationId: string;
  workspaceId: string;
  url: string;
  /** The types delivered, without duplicates; null: every type, including types added later. */
  eventTypes: EventType[] | null;
  enabled: boolean;
  /** `whsec_` + base64 of 32 random bytes (Standard Webhooks); replaced by refresh-signing-key. */
  signingKey: string;
  createdAt: string;
  modifiedAt: string;
  /**
   * Internal, never in the public shape: since when the registration is enabled without a break
   * (ISO 8601; set at creation and at each false -> true flip). Events created before it happened
   * while it was disabled (or before it existed) and are never delivered to it (DESIGN.md).
   * Registrations written before this field existed have none: every event counts.
   */
  enabledAt?: string;
  /**
   * Internal, never in the public shape: when the first failed attempt after the last success
   * happened (ISO 8601). Deliveries disable a registration still failing 5 days after it.
   */
  failingSince?: string;
}

/** What an update may change; absent fields stay as they are. */
export interface WebhookRegistrationChanges {
  url?: string;
  eventTypes?: EventType[] | null;
  enabled?: boolean;
  signingKey?: string;
  enabledAt?: string;
  /** Forgets `failingSince`: a new URL or a re-enable starts the 5-day count afresh. */
  clearFailing?: true;
}

export const webhookRegistrationKey = (id: string) => ({ PK: `WEBHOOK#${id}`, SK: 'WEBHOOK' });
/** How many registrations a workspace has, kept in the transactions that create and delete them (the cap). */
const registrationCountKey = (workspaceId: string) => ({ PK: `WS#${workspaceId}`, SK: 'WEBHOOKS' });
/** GSI1 lists a workspace's registrations by creation time. */
export const workspaceWebhooksPartition = (workspaceId: string) => `WS#${workspaceId}#WEBHOOKS`;

const ID_FORMAT = /^[0-9a-fA-F-]{36}$/;

function toItem(record: WebhookRegistrationRecord): Record<string, unknown> {
  return {
    ...webhookRegistrationKey(record.id),
    entity: 'WebhookRegistration',
    ...record,
    GSI1PK: workspaceWebhooksPartition(record.workspaceId),
    GSI1SK: `${record.createdAt}${SORT_SEPARATOR}${record.id}`,
  };
}

function fromItem(item: Record<string, unknown>): WebhookRegistrationRecord {
  const { GSI1PK: _partition, GSI1SK: _sort, ...rest } = recordOf<WebhookRegistrationRecord & { GSI1PK: string; GSI1SK: string }>(item);
  return rest;
}

/**
 * Creates a registration, with a check that its workspace is still live in the same transaction
 * (a registration created after the workspace's content deletion ran would otherwise outlive it)
 * and the workspace's registration count raised only while below `limit`, so concurrent creations
 * never pass the cap that bounds the fan-out's work per event.
 */
export async function insertWebhookRegistration(
  record: WebhookRegistrationRecord,
  limit: number,
): Promise<'created' | 'workspace-gone' | 'limit' | 'taken'> {
  const failed = await tryTransact([
    {
      ConditionCheck: {
        TableName: getConfig().tableName,
        Key: workspaceKey(record.workspaceId),
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(deletedAt)',
      },
    },
    {
      Update: {
        TableName: getConfig().tableName,
        Key: registrationCountKey(record.workspaceId),
        UpdateExpression: 'SET entity = :entity ADD registrations :one',
        ConditionExpression: 'attribute_not_exists(registrations) OR registrations < :limit',
        ExpressionAttributeValues: { ':entity': 'WebhookRegistrationCount', ':one': 1, ':limit': limit },
      },
    },
    putNew(toItem(record)),
  ]);
  if (failed.length === 0) return 'created';
  if (failed.includes(0)) return 'workspace-gone';
  return failed.includes(1) ? 'limit' : 'taken';
}

/** The registration with this id, or undefined. Strongly consistent: a delete or a refreshed key is seen at once. */
export async function getWebhookRegistration(id: string): Promise<WebhookRegistrationRecord | undefined> {
  if (!ID_FORMAT.test(id)) return undefined;
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: webhookRegistrationKey(id), ConsistentRead: true }),
  );
  return result.Item ? fromItem(result.Item) : undefined;
}

/**
 * Applies `changes` and `modifiedAt` in one conditional UpdateItem, only if the registration is
 * still as read (`modifiedAt` equal to `readModifiedAt`): the registration as written, `'stale'`
 * when another change came first (nothing written; read again), or undefined when it no longer
 * exists (a concurrent delete won, and nothing was written).
 */
export async function updateWebhookRegistration(
  id: string,
  changes: WebhookRegistrationChanges,
  modifiedAt: string,
  readModifiedAt: string,
): Promise<WebhookRegistrationRecord | 'stale' | undefined> {
  const { clearFailing, ...fields } = changes;
  const entries = Object.entries({ ...fields, modifiedAt }).filter(([, value]) => value !== undefined);
  try {
    const result = await getDb().send(
      new UpdateCommand({
        TableName: getConfig().tableName,
        Key: webhookRegistrationKey(id),
        UpdateExpression: `SET ${entries.map((_entry, index) => `#f${index} = :v${index}`).join(', ')}${clearFailing ? ' REMOVE failingSince' : ''}`,
        ConditionExpression: 'attribute_exists(PK) AND #modifiedAt = :read',
        ExpressionAttributeNames: {
          ...Object.fromEntries(entries.map(([name], index) => [`#f${index}`, name])),
          '#modifiedAt': 'modifiedAt',
        },
        ExpressionAttributeValues: {
          ...Object.fromEntries(entries.map(([, value], index) => [`:v${index}`, value])),
          ':read': readModifiedAt,
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return result.Attributes ? fromItem(result.Attributes) : undefined;
  } catch (error) {
    if (isConditionFailure(error)) return (error as { Item?: unknown }).Item ? 'stale' : undefined;
    throw error;
  }
}

/**
 * Records that a registration's attempts fail since `at`, unless an earlier failure is already
 * recorded (the condition keeps the first); a missing registration is left alone.
 */
export async function markWebhookFailing(id: string, at: string): Promise<void> {
  await conditionalUpdate(id, 'SET failingSince = :at', 'attribute_exists(PK) AND attribute_not_exists(failingSince)', { ':at': at });
}

/** Clears `failingSince` after a success; written only when set, so a healthy endpoint costs no write. */
export async function clearWebhookFailing(id: string): Promise<void> {
  await conditionalUpdate(id, 'REMOVE failingSince', 'attribute_exists(failingSince)');
}

async function conditionalUpdate(id: string, update: string, condition: string, values?: Record<string, unknown>): Promise<void> {
  try {
    await getDb().send(
      new UpdateCommand({
        TableName: getConfig().tableName,
        Key: webhookRegistrationKey(id),
        UpdateExpression: update,
        ConditionExpression: condition,
        ...(values ? { ExpressionAttributeValues: values } : {}),
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** One page of a workspace's registrations, newest first (next page: `before=<nextCursor>`). */
export async function listWorkspaceWebhookRegistrations(
  workspaceId: string,
  page: { limit: number; before?: string },
): Promise<Page<WebhookRegistrationRecord>> {
  return queryPage(
    {
      list: 'webhook-registrations',
      index: 'GSI1',
      partitionValue: workspaceWebhooksPartition(workspaceId),
      ascending: false,
      limit: page.limit,
      before: page.before,
    },
    fromItem,
  );
}

/**
 * Every registration of a workspace (the delivery fan-out): the index is eventually consistent,
 * so callers that must see a just-written change read the record itself (`getWebhookRegistration`).
 */
export async function allWorkspaceWebhookRegistrations(workspaceId: string): Promise<WebhookRegistrationRecord[]> {
  const records: WebhookRegistrationRecord[] = [];
  for await (const item of queryAll('GSI1', workspaceWebhooksPartition(workspaceId))) records.push(fromItem(item));
  return records;
}

/**
 * Deletes a registration and lowers its workspace's count in one transaction; false when it was
 * already gone (a concurrent delete), in which case nothing was written.
 */
export async function deleteWebhookRegistration(record: Pick<WebhookRegistrationRecord, 'id' | 'workspaceId'>): Promise<boolean> {
  const failed = await tryTransact([
    { Delete: { TableName: getConfig().tableName, Key: webhookRegistrationKey(record.id), ConditionExpression: 'attribute_exists(PK)' } },
    {
      Update: {
        TableName: getConfig().tableName,
        Key: registrationCountKey(record.workspaceId),
        UpdateExpression: 'ADD registrations :minus',
        ExpressionAttributeValues: { ':minus': -1 },
      },
    },
  ]);
  return failed.length === 0;
}

/** Removes every registration of a deleted workspace; a rerun deletes what a cut-short run left. */
export async function deleteWorkspaceWebhookRegistrations(workspaceId: string): Promise<number> {
  const keys: Record<string, unknown>[] = [];
  for await (const item of queryAll('GSI1', workspaceWebhooksPartition(workspaceId))) keys.push({ PK: item.PK, SK: item.SK });
  await batchDelete([...keys, registrationCountKey(workspaceId)]);
  return keys.length;
}
