/**
 * The live-update message protocol (DESIGN.md "Live updates"), the same for the local gateway's
 * socket and the deployed API Gateway WebSocket API: what a client may send, what the server
 * answers, and how a connection is closed. Pure: no I/O.
 */

/** What a client sends: subscribe to one markup's events, after `after` when it has seen up to there. */
export interface SubscribeMessage {
  type: 'subscribe';
  markupId: string;
  after?: number;
}

export interface SubscribedMessage {
  type: 'subscribed';
  markupId: string;
  /** The markup's last seq when the subscription started (0: no event yet). */
  seq: number;
}

export interface EventMessage {
  type: 'event';
  markupId: string;
  seq: number;
  /** The event's webhook body (`{ id, type, workspaceId, createdAt, data }`), as raw JSON text. */
  event: unknown;
}

export interface ErrorMessage {
  type: 'error';
  /** The markup the refused message named; null when it named none (a malformed message). */
  markupId: string | null;
  status: number;
  detail: string;
}

export type ServerMessage = SubscribedMessage | EventMessage | ErrorMessage;

/** The largest client message taken (a subscribe is well under 200 bytes). */
export const MAX_CLIENT_MESSAGE_BYTES = 4096;

/** Close codes (the 4000-4999 range is the application's): what a client sees when the server ends a connection. */
export const CLOSE = {
  /** The credential behind the connection was revoked, signed out, or its installation or end user deleted. */
  credentialGone: { code: 4401, reason: 'The credential of this connection is no longer valid.' },
  /** The server is going away (the local stack stops). */
  goingAway: { code: 1001, reason: 'The server is stopping.' },
} as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type ParsedClientMessage = { ok: true; message: SubscribeMessage } | { ok: false; error: ErrorMessage };

const malformed = (markupId: string | null, detail: string): ParsedClientMessage => ({
  ok: false,
  error: { type: 'error', markupId, status: 400, detail },
});

/**
 * Parses one client message: a JSON object `{ "type": "subscribe", "markupId": UUID, "after"?:
 * whole number >= 0 }`. Anything else is a 400 error message naming what is wrong (and the
 * `markupId`, when the message carried a usable one).
 */
export function parseClientMessage(text: string): ParsedClientMessage {
  if (Buffer.byteLength(text, 'utf8') > MAX_CLIENT_MESSAGE_BYTES)
    return malformed(null, `A message may be at most ${MAX_CLIENT_MESSAGE_BYTES} bytes.`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return malformed(null, 'A message must be a JSON object: { "type": "subscribe", "markupId": "…", "after"?: SEQ }.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return malformed(null, 'A message must be a JSON object: { "type": "subscribe", "markupId": "…", "after"?: SEQ }.');
  }
  const fields = value as Record<string, unknown>;
  const markupId = typeof fields.markupId === 'string' && UUID.test(fields.markupId) ? fields.markupId.toLowerCase() : null;
  if (fields.type !== 'subscribe') return malformed(markupId, '"type" must be "subscribe" (the only message a client sends).');
  if (fields.markupId === undefined) return malformed(null, '"markupId" is required.');
  if (markupId === null) return malformed(null, '"markupId" must be a markup id (a UUID).');
  const { after } = fields;
  if (after !== undefined && after !== null && !(typeof after === 'number' && Number.isSafeInteger(after) && after >= 0)) {
    return malformed(markupId, '"after" must be a whole number of 0 or more: the last seq the client received.');
  }
  return { ok: true, message: { type: 'subscribe', markupId, ...(typeof after === 'number' ? { after } : {}) } };
}

export const subscribedMessage = (markupId: string, seq: number): SubscribedMessage => ({ type: 'subscribed', markupId, seq });

export const errorMessage = (markupId: string | null, status: number, detail: string): ErrorMessage => ({
  type: 'error',
  markupId,
  status,
  detail,
});

/**
 * An event message as text, with the stored webhook body spliced in as it is (the same bytes a
 * webhook receiver gets), not parsed and written again.
 */
export function eventMessageText(markupId: string, seq: number, body: string): string {
  return `{"type":"event","markupId":${JSON.stringify(markupId)},"seq":${seq},"event":${body}}`;
}

export const messageText = (message: SubscribedMessage | ErrorMessage): string => JSON.stringify(message);
