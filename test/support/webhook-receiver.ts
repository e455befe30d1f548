import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got. */
export interface ReceivedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Epoch ms when the body was complete. */
  at: number;
}

/** How the receiver answers one request: a status, after `delayMs`, or never (`hang`). */
export interface ReceiverReply {
  status?: number;
  delayMs?: number;
  hang?: boolean;
}

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Queues the replies of the next requests, in order; once used up, every request gets 200. */
  script(...replies: ReceiverReply[]): void;
  close(): Promise<void>;
}

/** A loopback HTTP server standing in for a customer's webhook endpoint, scripted per request. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const replies: ReceiverReply[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        method: request.method ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const reply = replies.shift() ?? {};
      if (reply.hang) return;
      setTimeout(() => response.writeHead(reply.status ?? 200, { 'content-type': 'text/plain' }).end('ok'), reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    script: (...next) => replies.push(...next),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Verifies a received request with the standardwebhooks package (an implementation independent of ours); throws when it does not verify.
 */
export function verifyWithStandardWebhooks(signingKey: string, request: ReceivedRequest): unknown {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
  return new Webhook(signingKey).verify(request.body, headers);
}
