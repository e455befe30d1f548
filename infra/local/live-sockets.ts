import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context } from 'aws-lambda';
import { WebSocketServer, type WebSocket } from 'ws';
import type { WebSocketEvent, WebSocketResult } from '../../functions/live-socket/socket.js';
import {
  deleteLiveConnection,
  deleteLiveSubscription,
  openLiveSubscription,
  SUBSCRIPTION_OPENING,
  type StoredPrincipal,
} from '../../shared/db/live.js';
import { CLOSE, MAX_CLIENT_MESSAGE_BYTES } from '../../shared/domain/live/protocol.js';
import { closeDeadConnections, type DeliveryOutcome, type LiveTransport } from '../../shared/domain/live/service.js';
import { lambdaContext } from './gateway.js';

/** The path the local gateway upgrades on its own port (DESIGN.md "Live updates"). */
export const LIVE_PATH = '/api/v2/live';

/** How often the sockets' credentials are read again, so a revoked one's socket closes without waiting for an event. */
const CREDENTIAL_SWEEP_MS = 2_000;

export type SocketHandler = (event: WebSocketEvent, context: Context) => Promise<WebSocketResult>;

interface Connection {
  socket: WebSocket;
  /** The principal of its subscriptions (they all come from its ticket). */
  principal?: StoredPrincipal;
  /** Last seq sent per subscribed markup (SUBSCRIPTION_OPENING while its subscribe is answered). */
  sent: Map<string, number>;
  /** Its messages, one at a time in arrival order (as a client expects its subscribes answered). */
  queue: Promise<void>;
}

export interface LiveSockets {
  /** The gateway's `upgrade` listener for LIVE_PATH. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Where the live functions send (in this process, as API Gateway's connections deployed). */
  transport: LiveTransport;
  /** How many sockets are open (tests, the bench). */
  count(): number;
  close(): Promise<void>;
}

/**
 * The local stand-in for API Gateway's WebSocket API: upgrades `GET /api/v2/live?ticket=…` on the
 * gateway's own port, hands `$connect`, `$default` and `$disconnect` to the live-socket function
 * (the same code Lambda runs), and is that function's and the live fan-out's transport: each
 * subscription's last seq sent is kept here with its socket, and a claim and its send happen in one
 * turn of the event loop, so events leave in seq order.
 */
export function startLiveSockets(handler: SocketHandler, onError: (error: unknown) => void = () => undefined): LiveSockets {
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES * 4 });
  const connections = new Map<string, Connection>();

  const invoke = (routeKey: string, connectionId: string, extra: Partial<WebSocketEvent> = {}) => {
    const requestId = randomBytes(8).toString('hex');
    return handler(
      { requestContext: { routeKey, connectionId, eventType: routeKey.replace('$', '').toUpperCase(), requestId }, ...extra },
      lambdaContext('live-socket', requestId),
    );
  };

  const transport: LiveTransport = {
    async send(connectionId, text) {
      const connection = connections.get(connectionId);
      if (!connection || connection.socket.readyState !== connection.socket.OPEN) return false;
      connection.socket.send(text);
      return true;
    },
    async open(connectionId, markupId, principal, workspaceId) {
      const connection = connections.get(connectionId);
      if (!connection) return false;
      connection.principal = principal;
      connection.sent.set(markupId, SUBSCRIPTION_OPENING);
      return openLiveSubscription({ connectionId, markupId, principal, workspaceId }, Date.now());
    },
    async start(connectionId, markupId, sent) {
      connections.get(connectionId)?.sent.set(markupId, sent);
    },
    async deliver(connectionId, markupId, seq, text): Promise<DeliveryOutcome> {
      const connection = connections.get(connectionId);
      if (!connection || connection.socket.readyState !== connection.socket.OPEN) {
        // A subscription of a socket this process does not hold (closed, or left by a stack that was killed).
        if (!connection) await deleteLiveSubscription(markupId, connectionId);
        return { kind: 'gone' };
      }
      const sent = connection.sent.get(markupId);
      if (sent !== seq - 1) return { kind: 'not-next', ...(sent === undefined ? {} : { sent }) };
      connection.sent.set(markupId, seq);
      connection.socket.send(text);
      return { kind: 'sent' };
    },
    async close(connectionId, code, reason) {
      const connection = connections.get(connectionId);
      if (connection) connection.socket.close(code, reason);
      else await deleteLiveConnection(connectionId);
    },
  };

  const sweep = setInterval(() => {
    const open = [...connections.entries()].flatMap(([connectionId, { principal }]) => (principal ? [{ connectionId, principal }] : []));
    if (open.length > 0) closeDeadConnections(open, transport).catch(onError);
  }, CREDENTIAL_SWEEP_MS);
  sweep.unref();

  const refuse = (socket: Duplex, status: number, body: string) => {
    const reason = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 500: 'Internal Server Error' }[status] ?? 'Error';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== LIVE_PATH || request.method !== 'GET') {
      refuse(socket, 404, JSON.stringify({ message: 'Not Found' }));
      return;
    }
    // API Gateway's connection ids are opaque strings; these look alike (base64url, 16 characters).
    const connectionId = randomBytes(12).toString('base64url');
    const ticket = url.searchParams.get('ticket') ?? undefined;
    invoke('$connect', connectionId, { queryStringParameters: ticket === undefined ? {} : { ticket } })
      .then((result) => {
        if (result.statusCode !== 200) {
          refuse(socket, result.statusCode, result.body ?? '');
          return;
        }
        server.handleUpgrade(request, socket, head, (ws) => {
          const connection: Connection = { socket: ws, sent: new Map(), queue: Promise.resolve() };
          connections.set(connectionId, connection);
          ws.on('message', (data, isBinary) => {
            const body = isBinary ? '' : data.toString();
            connection.queue = connection.queue.then(() => invoke('$default', connectionId, { body }).then(() => undefined)).catch(onError);
          });
          ws.on('close', () => {
            connections.delete(connectionId);
            void connection.queue.then(() => invoke('$disconnect', connectionId)).catch(onError);
          });
          ws.on('error', onError);
        });
      })
      .catch((error: unknown) => {
        onError(error);
        refuse(socket, 500, JSON.stringify({ message: 'Internal Server Error' }));
      });
  };

  return {
    upgrade,
    transport,
    count: () => connections.size,
    close: async () => {
      clearInterval(sweep);
      for (const { socket } of connections.values()) socket.close(CLOSE.goingAway.code, CLOSE.goingAway.reason);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
