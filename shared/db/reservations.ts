import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { counterUpdate, type StorageCategory } from './storage.js';
import { putNew, type TransactItem } from './core/transact.js';

/**
 * Storage reservations. Issuing an upload policy reserves its declared size on the organization's
 * counters (`reserved`, and `claimed`, which the plan's limit bounds) and writes a reservation
 * record under `ORG#<orgId>`. The reservation ends once, either way: confirmation turns it into
 * stored bytes, expiry gives it back (the sweep, reservation-sweep.ts), and both delete the record
 * on the condition that it still exists, in the transaction that moves the counters. The record
 * carries no TTL attribute: the table's TTL would delete it without giving the bytes back.
 */
export interface Reservation {
  organizationId: string;
  fileId: string;
  bytes: number;
  /**
   * Epoch seconds after which the bytes go back: when the upload's policy can no longer be used
   * while its object has not landed, when its record expires once it has (the sweep moves it).
   */
  untilEpoch: number;
}

const PREFIX = 'RESERVATION#';
const epochPart = (epoch: number) => String(epoch).padStart(12, '0');

/** Sorted by the time they end, so expired ones are one key range. */
export const reservationKey = (reservation: Pick<Reservation, 'organizationId' | 'fileId' | 'untilEpoch'>) => ({
  PK: `ORG#${reservation.organizationId}`,
  SK: `${PREFIX}${epochPart(reservation.untilEpoch)}#${reservation.fileId}`,
});

const reservationItem = (reservation: Reservation) => ({ ...reservationKey(reservation), entity: 'StorageReservation', ...reservation });

/** The reservation's record and counters, for the transaction that issues the upload: fails its condition when `limit` has no room left. */
export function reserveItems(reservation: Reservation, limit: number | null): TransactItem[] {
  return [
    putNew(reservationItem(reservation)),
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
    {
      Update: counterUpdate(reservation.organizationId, {
        reserved: -reservation.bytes,
        ...(stored ? { [stored.category]: stored.bytes } : {}),
      }),
    },
  ];
}

/**
 * Moves a reservation to end at `untilEpoch` instead, bytes unchanged (condition: it still exists
 * where it was). For the transaction that also records the new end on its upload.
 */
export function moveReservationItems(reservation: Reservation, untilEpoch: number): TransactItem[] {
  return [
    { Delete: { TableName: getConfig().tableName, Key: reservationKey(reservation), ConditionExpression: 'attribute_exists(PK)' } },
    putNew(reservationItem({ ...reservation, untilEpoch })),
  ];
}

/** One page (up to 25) of the organization's reservations that ended before `nowEpoch`, oldest end first. */
export async function endedReservations(
  organizationId: string,
  nowEpoch: number,
  start?: Record<string, unknown>,
): Promise<{ reservations: Reservation[]; next?: Record<string, unknown> }> {
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
  const reservations = (result.Items ?? []).map(
    ({ organizationId, fileId, bytes, untilEpoch }) => ({ organizationId, fileId, bytes, untilEpoch }) as Reservation,
  );
  return { reservations, next: result.LastEvaluatedKey };
}
