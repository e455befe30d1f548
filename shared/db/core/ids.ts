import { randomBytes } from 'node:crypto';

const TIME_ORDERED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * A UUID version 7 (RFC 9562): 48 bits of milliseconds, then random bits (74 of them), so ids sort
 * by creation time. Keys built from such ids sit in creation order: a page of threads created
 * close together has its read marks side by side (`read-marks.ts`), and a delivery log lists in time.
 */
export function timeOrderedId(at = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(at, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Whether `id` is one `timeOrderedId` makes (lower-case UUID version 7). */
export const isTimeOrderedId = (id: string) => TIME_ORDERED_ID.test(id);
