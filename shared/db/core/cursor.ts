import { createHmac, timingSafeEqual } from 'node:crypto';
import { BadRequestError } from '../../errors.js';

/**
 * Opaque, tamper-evident cursors: base64url(JSON) + "." + truncated HMAC-SHA256. A cursor names the
 * list it belongs to, so one list's cursor is refused by another.
 */
export function encodeCursor(key: Buffer, list: string, position: Record<string, unknown>): string {
  const payload = Buffer.from(JSON.stringify({ l: list, p: position })).toString('base64url');
  return `${payload}.${sign(key, payload)}`;
}

export function decodeCursor(key: Buffer, list: string, cursor: string, parameter: string): Record<string, unknown> {
  const invalid = () => new BadRequestError(`${parameter} is not a valid cursor for this list.`, 'invalid-cursor');
  const [payload, signature, ...rest] = cursor.split('.');
  if (!payload || !signature || rest.length > 0) throw invalid();
  const expected = Buffer.from(sign(key, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const body = parsed as { l?: unknown; p?: unknown };
  if (body.l !== list || typeof body.p !== 'object' || body.p === null) throw invalid();
  return body.p as Record<string, unknown>;
}

function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(payload).digest().subarray(0, 18).toString('base64url');
}
