import type { Context } from 'aws-lambda';
import { logger } from '../../shared/logger.js';
import { liveTransport } from '../../shared/domain/live/transport.js';
import { connectLive, disconnectLive, receiveLive, type LiveTransport } from '../../shared/domain/live/service.js';
import { markupEventLog } from '../../shared/domain/live/log.js';

/** What API Gateway hands a WebSocket route's integration (the fields used here). */
export interface WebSocketEvent {
  requestContext: { routeKey: string; connectionId: string; eventType?: string; requestId?: string };
  queryStringParameters?: Record<string, string | undefined> | null;
  body?: string | null;
  isBase64Encoded?: boolean;
}

export interface WebSocketResult {
  statusCode: number;
  body?: string;
}

/**
 * One WebSocket route event: `$connect` takes the ticket (401 refuses the upgrade), `$disconnect`
 * forgets the connection, `$default` is a client message (a subscribe). The transport is API
 * Gateway's deployed and the local gateway's sockets locally: the same code runs on both.
 */
export async function handleSocketEvent(event: WebSocketEvent, transport: LiveTransport, context?: Context): Promise<WebSocketResult> {
  if (context) logger.addContext(context);
  const { routeKey, connectionId } = event.requestContext;
  if (routeKey === '$connect') {
    const answer = await connectLive(event.queryStringParameters?.ticket ?? undefined, connectionId);
    return answer.ok
      ? { statusCode: 200 }
      : { statusCode: answer.status, body: JSON.stringify({ status: answer.status, detail: answer.detail }) };
  }
  if (routeKey === '$disconnect') {
    await disconnectLive(connectionId);
    return { statusCode: 200 };
  }
  const text = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '';
  await receiveLive(connectionId, text, transport, markupEventLog);
  return { statusCode: 200 };
}

/** The entry's handler: API Gateway's connections deployed, the local gateway's sockets locally. */
export const handleLiveSocketEvent = (event: WebSocketEvent, context?: Context) => handleSocketEvent(event, liveTransport(), context);
