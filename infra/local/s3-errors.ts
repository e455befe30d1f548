import { randomBytes } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** A refusal answered with S3's XML error document. */
export class S3ErrorResponse extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'S3ErrorResponse';
  }
}

export function newRequestId(): string {
  return randomBytes(8).toString('hex').toUpperCase();
}

export function newHostId(): string {
  return randomBytes(48).toString('base64');
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Answers with S3's XML error document. */
export function sendError(res: ServerResponse, error: S3ErrorResponse, extraHeaders: OutgoingHttpHeaders = {}): void {
  const requestId = newRequestId();
  const hostId = newHostId();
  const details = Object.entries(error.details)
    .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
    .join('');
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${escapeXml(error.code)}</Code><Message>${escapeXml(error.message)}</Message>${details}` +
    `<RequestId>${requestId}</RequestId><HostId>${escapeXml(hostId)}</HostId></Error>`;
  res.writeHead(error.status, {
    ...extraHeaders,
    'Content-Type': 'application/xml',
    'Content-Length': Buffer.byteLength(xml),
    'x-amz-request-id': requestId,
    'x-amz-id-2': hostId,
  });
  res.end(xml);
}

/**
 * Answers a refusal without reading the body into memory: what the client still sends is discarded
 * as it arrives, and a client that keeps sending after a minute loses the connection.
 */
export function refuse(req: IncomingMessage, res: ServerResponse, error: S3ErrorResponse, headers: OutgoingHttpHeaders = {}): void {
  sendError(res, error, headers);
  discardRest(req);
}

export function discardRest(req: IncomingMessage): void {
  if (req.readableEnded) return;
  const timer = setTimeout(() => req.socket.destroy(), 60_000);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/** One JSON line on stderr, matching the rest of the stack's log format. */
export function logError(message: string, error: unknown): void {
  const detail = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
  process.stderr.write(`${JSON.stringify({ level: 'error', message, time: new Date().toISOString(), error: detail })}\n`);
}
