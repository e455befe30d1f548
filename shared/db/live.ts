import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { apiKeyKey } from './api-keys.js';
import { isConditionFailure } from './core/errors.js';
import { queryAll, queryPrefix } from './core/paging.js';
import { TABLE } from './core/table.js';
import { batchDelete } from './core/transact.js';

/**
 * The records of live updates (DESIGN.md "Live updates"): single-use tickets, open connections and
 * their subscriptions. Each expires with DynamoDB TTL; every check compares the stored millisecond
 * expiry itself, since TTL removes items within days, not on time.
 */

/**
 * What a ticket, a connection and a subscription stand for: the caller's principal as authenticated
 * when the ticket was issued, without its per-request state (`live`, `authorization`). Never a
 * credential: what it names is read again (`credentialAlive`) before anything is sent under it.
 */
export type StoredPrincipal = Record<string, unknown> & { kind: 'apiKey' | 'endUser' | 'session'; userId: string };

/** SHA-256 of a ticket: the table never holds a ticket that works. */
export const hashLiveTicket = (ticket: string) => createHash('sha256').update(ticket, 'utf8').digest('base64url');

export const liveTicketKey = (ticketHash: string) => ({ PK: `LIVETICKET#${ticketHash}`, SK: 'LIVETICKET' });
export const liveConnectionKey = (connectionId: string) => ({ PK: `LIVECONN#${connectionId}`, SK: 'LIVECONN' });
/** The subscriptions of one markup share its partition: the fan-out reads them with one Query. */
export const liveSubscriptionsPartition = (markupId: string) => `LIVE#${markupId}`;
export const liveSubscriptionKey = (markupId: string, connectionId: string) => ({
  PK: liveSubscriptionsPartition(markupId),
  SK: `CONN#${connectionId}`,
});

/** The GSI5 partition that lists every open connection (the periodic credential check walks it). */
const CONNECTIONS_INDEX_PARTITION = 'LIVECONNS';

/**
 * How long a connection and its subscriptions are kept without being refreshed: longer than API
 * Gateway's two-hour limit on a WebSocket connection, so a record outlives its socket only when
 * `$disconnect` never came.
 */
export const LIVE_CONNECTION_TTL_MS = 3 * 3600 * 1000;

/**
 * `sent` of a subscription whose `subscribed` answer is not sent yet: no event may go out under it
 * (`claimLiveSeq` needs `sent = seq - 1`, and seqs start at 1).
 */
export const SUBSCRIPTION_OPENING = -1;

const ttlOf = (expiresAt: number) => ({ [TABLE.ttlAttribute]: Math.ceil(expiresAt / 1000) });

export interface LiveTicketRecord {
  principal: StoredPrincipal;
  /** Epoch milliseconds after which the ticket is refused. */
  expiresAt: number;
}

export interface LiveConnectionRecord {
  connectionId: string;
  principal: StoredPrincipal;
  connectedAt: number;
  /** The markups it subscribed to (for `$disconnect`'s cleanup). */
  markupIds: string[];
}

export interface LiveSubscriptionRecord {
  connectionId: string;
  markupId: string;
  principal: StoredPrincipal;
  /** The markup's workspace when the subscription was authorized (an event of another one authorizes it again). */
  workspaceId?: string;
  /** The last seq sent on this subscription; SUBSCRIPTION_OPENING while it opens. */
  sent: number;
}

const table = () => getConfig().tableName;

export async function insertLiveTicket(ticketHash: string, record: LiveTicketRecord): Promise<void> {
  await getDb().send(
    new PutCommand({
      TableName: table(),
      Item: { ...liveTicketKey(ticketHash), entity: 'LiveTicket', ...record, ...ttlOf(record.expiresAt) },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
}

/**
 * Takes a ticket: one conditional DeleteItem, so of any number of concurrent connects exactly one
 * gets it, and an expired one is never taken. Undefined when unknown, used or expired.
 */
export async function takeLiveTicket(ticketHash: string, now: number): Promise<LiveTicketRecord | undefined> {
  try {
    const result = await getDb().send(
      new DeleteCommand({
        TableName: table(),
        Key: liveTicketKey(ticketHash),
        ConditionExpression: 'attribute_exists(PK) AND expiresAt > :now',
        ExpressionAttributeValues: { ':now': now },
        ReturnValues: 'ALL_OLD',
      }),
    );
    const item = result.Attributes;
    return item ? { principal: item.principal as StoredPrincipal, expiresAt: item.expiresAt as number } : undefined;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Moves a ticket's expiry (tests: a ticket that expired without waiting). Local stack only. */
export async function setLiveTicketExpiry(ticketHash: string, expiresAt: number): Promise<void> {
  if (getConfig().mode !== 'local') throw new Error('Live tickets can be aged only on the local stack (tests).');
  await getDb().send(
    new UpdateCommand({
      TableName: table(),
      Key: liveTicketKey(ticketHash),
      UpdateExpression: 'SET expiresAt = :at',
      ExpressionAttributeValues: { ':at': expiresAt },
    }),
  );
}

export async function putLiveConnection(record: Omit<LiveConnectionRecord, 'markupIds'>): Promise<void> {
  await getDb().send(
    new PutCommand({
      TableName: table(),
      Item: {
        ...liveConnectionKey(record.connectionId),
        entity: 'LiveConnection',
        ...record,
        markupIds: [],
        GSI5PK: CONNECTIONS_INDEX_PARTITION,
        GSI5SK: record.connectionId,
        ...ttlOf(record.connectedAt + LIVE_CONNECTION_TTL_MS),
      },
    }),
  );
}

export async function getLiveConnection(connectionId: string): Promise<LiveConnectionRecord | undefined> {
  const { Item: item } = await getDb().send(
    new GetCommand({ TableName: table(), Key: liveConnectionKey(connectionId), ConsistentRead: true }),
  );
  if (!item) return undefined;
  return {
    connectionId,
    principal: item.principal as StoredPrincipal,
    connectedAt: item.connectedAt as number,
    markupIds: (item.markupIds as string[] | undefined) ?? [],
  };
}

/**
 * Records a subscription as opening (`sent`: SUBSCRIPTION_OPENING) and names its markup on the
 * connection; false when the connection record is gone (closed meanwhile).
 */
export async function openLiveSubscription(record: Omit<LiveSubscriptionRecord, 'sent'>, now: number): Promise<boolean> {
  try {
    await getDb().send(
      new UpdateCommand({
        TableName: table(),
        Key: liveConnectionKey(record.connectionId),
        UpdateExpression: 'SET markupIds = list_append(if_not_exists(markupIds, :none), :markup)',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':none': [], ':markup': [record.markupId] },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
  await getDb().send(
    new PutCommand({
      TableName: table(),
      Item: {
        ...liveSubscriptionKey(record.markupId, record.connectionId),
        entity: 'LiveSubscription',
        ...record,
        sent: SUBSCRIPTION_OPENING,
        ...ttlOf(now + LIVE_CONNECTION_TTL_MS),
      },
    }),
  );
  return true;
}

/** Sets where an opened subscription starts (its `subscribed` answer went out): the next event sent is `sent + 1`. */
export async function startLiveSubscription(markupId: string, connectionId: string, sent: number): Promise<boolean> {
  try {
    await getDb().send(
      new UpdateCommand({
        TableName: table(),
        Key: liveSubscriptionKey(markupId, connectionId),
        UpdateExpression: 'SET sent = :sent',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':sent': sent },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Claims `seq` on a subscription: one conditional UpdateItem that holds only when `seq - 1` was
 * the last sent, so of the fan-out and a catch-up racing for one event exactly one sends it, and
 * never one past a gap. Answers whether it was claimed and, when not, the last seq sent (undefined:
 * the subscription is gone).
 */
export async function claimLiveSeq(markupId: string, connectionId: string, seq: number): Promise<{ claimed: boolean; sent?: number }> {
  try {
    await getDb().send(
      new UpdateCommand({
        TableName: table(),
        Key: liveSubscriptionKey(markupId, connectionId),
        UpdateExpression: 'SET sent = :seq',
        ConditionExpression: 'sent = :previous',
        ExpressionAttributeValues: { ':seq': seq, ':previous': seq - 1 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { claimed: true, sent: seq };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // The old item comes back in DynamoDB's attribute-value shape (the document client leaves it so).
    const old = error instanceof ConditionalCheckFailedException && error.Item ? unmarshall(error.Item) : undefined;
    const sent = old?.sent;
    return { claimed: false, ...(typeof sent === 'number' ? { sent } : {}) };
  }
}

/** Every subscription to a markup (one strongly consistent Query). */
export async function liveSubscriptionsOf(markupId: string): Promise<LiveSubscriptionRecord[]> {
  const items = await queryPrefix(liveSubscriptionsPartition(markupId), 'CONN#', { consistent: true });
  return items.map((item) => ({
    connectionId: item.connectionId as string,
    markupId,
    principal: item.principal as StoredPrincipal,
    ...(typeof item.workspaceId === 'string' ? { workspaceId: item.workspaceId } : {}),
    sent: item.sent as number,
  }));
}

/** Every open connection with its principal, 100 at a time (GSI5 `LIVECONNS`): for the periodic credential check. */
export async function* allLiveConnections(): AsyncGenerator<{ connectionId: string; principal: StoredPrincipal }> {
  for await (const item of queryAll('GSI5', CONNECTIONS_INDEX_PARTITION)) {
    if (item.entity === 'LiveConnection') yield { connectionId: item.connectionId as string, principal: item.principal as StoredPrincipal };
  }
}

/** Forgets a connection and its subscriptions (`$disconnect`, a gone or closed connection). */
export async function deleteLiveConnection(connectionId: string): Promise<void> {
  const connection = await getLiveConnection(connectionId);
  const markupIds = [...new Set(connection?.markupIds ?? [])];
  await batchDelete([...markupIds.map((markupId) => liveSubscriptionKey(markupId, connectionId)), liveConnectionKey(connectionId)]);
}

/** Forgets one subscription whose connection is gone (the fan-out found it so). */
export async function deleteLiveSubscription(markupId: string, connectionId: string): Promise<void> {
  await getDb().send(new DeleteCommand({ TableName: table(), Key: liveSubscriptionKey(markupId, connectionId) }));
}

/** Whether an API key still works (one strongly consistent GetItem: a revocation holds from its answer on). */
export async function isApiKeyLive(keyId: string): Promise<boolean> {
  const { Item: item } = await getDb().send(new GetCommand({ TableName: table(), Key: apiKeyKey(keyId), ConsistentRead: true }));
  return item !== undefined && !item.revokedAt;
}
