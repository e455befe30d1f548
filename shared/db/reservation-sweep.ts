import { getConfig } from '../config.js';
import { isTransactionConflict } from './core/errors.js';
import { endedReservations, endReservationItems, moveReservationItems, type Reservation } from './reservations.js';
import { tryTransact, type TransactItem } from './core/transact.js';
import { getUploads, uploadKey, type UploadRecord } from './uploads.js';

/**
 * Ends the organization's reservations whose time was up before `nowEpoch`, up to `pages` queries
 * of 25, and answers how many it gave back. An upload reserves until its policy can no longer be
 * used, so a policy never used frees its bytes minutes after it was issued, not a day later. One
 * whose object landed (`landedAt`) may still be confirmed until its record expires, so its
 * reservation is moved to that time instead (record and reservation in one transaction) and given
 * back then. Every step is conditional, so the counters move once: a reservation confirmed, moved or
 * released concurrently, or whose object lands meanwhile, is skipped (the next sweep sees it as it
 * is now); one caught in a transaction conflict is left for the next sweep.
 */
export async function releaseExpiredReservations(organizationId: string, nowEpoch: number, pages = 4): Promise<number> {
  let released = 0;
  let start: Record<string, unknown> | undefined;
  for (let page = 0; page < pages; page += 1) {
    const { reservations, next } = await endedReservations(organizationId, nowEpoch, start);
    const uploads = new Map(
      (await getUploads(reservations.map((reservation) => reservation.fileId))).map((upload) => [upload.fileId, upload]),
    );
    for (const reservation of reservations) {
      const upload = uploads.get(reservation.fileId);
      const move = upload && stillConfirmable(upload, reservation, nowEpoch) ? upload.expiresAtEpoch! : undefined;
      try {
        const failed = await tryTransact(move === undefined ? releaseItems(reservation, nowEpoch) : moveItems(reservation, move));
        if (failed.length === 0 && move === undefined) released += 1;
      } catch (error) {
        if (!isTransactionConflict(error)) throw error;
      }
    }
    start = next;
    if (!start) break;
  }
  return released;
}

/** An issued upload whose object landed and whose record has not expired, reserved for less than the record's life. */
function stillConfirmable(upload: UploadRecord, reservation: Reservation, nowEpoch: number): boolean {
  const until = upload.expiresAtEpoch;
  return (
    upload.state === 'issued' && upload.landedAt !== undefined && until !== undefined && until > nowEpoch && reservation.untilEpoch < until
  );
}

/** Gives the bytes back unless the object landed on a record still alive at `nowEpoch` (a record gone by TTL has no `landedAt`). */
function releaseItems(reservation: Reservation, nowEpoch: number): TransactItem[] {
  return [
    ...endReservationItems(reservation),
    {
      ConditionCheck: {
        TableName: getConfig().tableName,
        Key: uploadKey(reservation.fileId),
        ConditionExpression: 'attribute_not_exists(landedAt) OR #state <> :issued OR expiresAtEpoch <= :now',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':issued': 'issued', ':now': nowEpoch },
      },
    },
  ];
}

/** Moves the reservation of a landed upload to its record's expiry, and records the new end on the record. */
function moveItems(reservation: Reservation, untilEpoch: number): TransactItem[] {
  return [
    ...moveReservationItems(reservation, untilEpoch),
    {
      Update: {
        TableName: getConfig().tableName,
        Key: uploadKey(reservation.fileId),
        UpdateExpression: 'SET reservedUntilEpoch = :to',
        ConditionExpression: '#state = :issued AND attribute_exists(landedAt) AND reservedUntilEpoch = :from',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':issued': 'issued', ':from': reservation.untilEpoch, ':to': untilEpoch },
      },
    },
  ];
}
