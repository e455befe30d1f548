import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { isTransactionConflict } from './errors.js';
import { counterUpdate, type StorageCategory } from './storage.js';
import { putNew, tryTransact, type TransactItem } from './transact.js';

/**
 * Storage reservations. Issuing an upload policy reserves its declared size on the organization's
 * counters (`reserved`, and `claimed`, which the plan's limit bounds) and writes a reservation
 * record under `ORG#<orgId>`. The reservation ends once, either way: confirmation turns it into
 * stored bytes, expiry gives it back, and both delete the record on the condition that it still
 * exists, in the transaction that moves the counters. The record carries no TTL attribute: the
 * table's TTL would delete it without giving the bytes back.
 */
export interface Reservation {
  organizationId: string;
  fileId: string;
  bytes: number;
  /** Epoch seconds after which the upload can no longer be confirmed and the bytes go back. */
  untilEpoch: number;
}

const PREFIX = 'RESERVATION#';
const epochPart = (epoch: number) => String(epoch).padStart(12, '0');

/** Sorted by the time they end, so expired ones are one key range. */
export const reservationKey = (reservation: Pick<Reservation, 'organizationId' | 'fileId' | 'untilEpoch'>) => ({
  PK: `ORG#${reservation.organizationId}`,
  SK: `${PREFIX}${epochPart(reservation.untilEpoch)}#${reservation.fileId}`,
});

/** The reservation's record and counters, for the transaction that issues the upload: fails its condition when `limit` has no room left. */
export function reserveItems(reservation: Reservation, limit: number | null): TransactItem[] {
  return [
    putNew({ ...reservationKey(reservation), entity: 'StorageReservation', ...reservation }),
    { Update: counterUpdate(reservation.organizationId, { reserved: reservation.bytes }, { limit }) },
  ];
}

/**
 * Ends a reservation with `storedBytes` stored under `category` (0 to give it all back): the record
 * goes (condition: it still exists) and `reserved` falls by the whole reservation.
 */
export function endReservationItems(reservation: Reservation, stored?: { category: StorageCategory; bytes: number }): TransactItem[] {
  return [
    { Delete: { TableName: getConfig().tableName, Key: reservationKey(reservation), ConditionExpression: 'attribute_exists(PK)' } },
    { Update: counterUpdate(reservation.organizationId, { reserved: -reservation.bytes, ...(stored ? { [stored.category]: stored.bytes } : {}) }) },
  ];
}

/**
 * Gives back the bytes of the organization's reservations that ended before `nowEpoch` (policies
 * that expired unconfirmed), up to `pages` queries of 25. Answers how many it released; a
 * reservation released or confirmed concurrently is skipped, one caught in a transaction conflict
 * is left for the next sweep.
 */
export async function releaseExpiredReservations(organizationId: string, nowEpoch: number, pages = 4): Promise<number> {
  let released = 0;
  let start: Record<string, unknown> | undefined;
  for (let page = 0; page < pages; page += 1) {
    const result = await getDb().send(
      new QueryCommand({
        TableName: getConfig().tableName,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': `ORG#${organizationId}`, ':from': PREFIX, ':to': `${PREFIX}${epochPart(nowEpoch)}` },
        ConsistentRead: true,
        Limit: 25,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of result.Items ?? []) {
      try {
        if ((await tryTransact(endReservationItems(item as unknown as Reservation))).length === 0) released += 1;
      } catch (error) {
        if (!isTransactionConflict(error)) throw error;
      }
    }
    start = result.LastEvaluatedKey;
    if (!start) break;
  }
  return released;
}
