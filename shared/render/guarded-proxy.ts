import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { pinAddress, systemResolve, UnsafeUrlError, type AddressPolicy, type Resolve } from './url-safety.js';

export interface NetworkGuard {
  /** Which resolved addresses may be connected to. */
  allowed: AddressPolicy;
  /** Name resolution; tests map names to addresses here. */
  resolve?: Resolve;
}

export interface GuardedProxy {
  /** `http://127.0.0.1:<port>`, for Chromium's `--proxy-server`. */
  url: string;
  /** Every refused destination, `host:port -> reason`, for logs and tests. */
  refused: string[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy through which Chromium makes every request of a render: documents, subresources,
 * frames, redirects and navigations in plain-HTTP proxy form, https and websockets as CONNECT
 * tunnels. Each destination host is resolved once, every address it resolves to must pass the
 * guard, and the proxy connects to exactly the address it checked, so neither a page's own
 * requests nor a DNS answer that changes between check and connect (rebinding) can reach the
 * stack's network. Redirects are passed back to Chromium, whose next request comes through here
 * again. Listens on loopback only; `close` also drops open tunnels.
 */
export async function startGuardedProxy(guard: NetworkGuard): Promise<GuardedProxy> {
  const resolve = guard.resolve ?? systemResolve;
  const refused: string[] = [];
  const sockets = new Set<Duplex>();
  const pin = async (host: string, port: string): Promise<string | undefined> => {
    try {
      return await pinAddress(host, guard.allowed, resolve);
    } catch (error) {
      refused.push(`${host}:${port} -> ${(error as Error).message}`);
      if (error instanceof UnsafeUrlError) return undefined;
      throw error;
    }
  };

  const server = createServer((request, response) => {
    forward(request, response, pin).catch(() => {
      if (!response.headersSent) response.writeHead(502).end();
      else response.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('connect', (request: IncomingMessage, client: Duplex, head: Buffer) => {
    void tunnel(request.url ?? '', client, head, pin, sockets);
  });
  server.on('upgrade', (request: IncomingMessage, client: Duplex) => {
    // Chromium tunnels websockets with CONNECT; a plain-HTTP upgrade through the proxy is refused.
    client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
    refused.push(`${request.url ?? ''} -> upgrade refused`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}

type Pin = (host: string, port: string) => Promise<string | undefined>;

/** One plain-HTTP request in proxy form (`GET http://host/path`), sent to the pinned address. */
async function forward(request: IncomingMessage, response: ServerResponse, pin: Pin): Promise<void> {
  let target: URL;
  try {
    target = new URL(request.url ?? '');
  } catch {
    response.writeHead(400).end();
    return;
  }
  if (target.protocol !== 'http:') {
    response.writeHead(400).end();
    return;
  }
  const port = target.port || '80';
  const address = await pin(target.hostname, port);
  if (!address) {
    response.writeHead(403, { 'content-type': 'text/plain' }).end('Refused by the renderer: private address.');
    return;
  }
  const headers: Record<string, string | string[] | undefined> = { ...request.headers, host: target.host };
  delete headers['proxy-connection'];
  delete headers['proxy-authorization'];
  const upstream = httpRequest({
    host: address,
    port: Number(port),
    method: request.method,
    path: `${target.pathname}${target.search}`,
    headers,
  });
  upstream.on('response', (answer) => {
    response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
    answer.pipe(response);
  });
  upstream.on('error', () => {
    if (!response.headersSent) response.writeHead(502).end();
    else response.destroy();
  });
  response.on('close', () => upstream.destroy());
  request.pipe(upstream);
}

/** A CONNECT tunnel (https, wss) to the pinned address; TLS stays end to end with the page's host. */
async function tunnel(authority: string, client: Duplex, head: Buffer, pin: Pin, sockets: Set<Duplex>): Promise<void> {
  client.on('error', () => client.destroy());
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(authority);
  const address = match ? await pin(match[1]!, match[2]!).catch(() => undefined) : undefined;
  if (!match || !address) {
    client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
    return;
  }
  const upstream = connect({ host: address, port: Number(match[2]) });
  let connected = false;
  sockets.add(upstream);
  upstream.once('close', () => sockets.delete(upstream));
  upstream.once('connect', () => {
    connected = true;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', () => {
    if (!connected) client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n');
    else client.destroy();
  });
  client.once('close', () => upstream.destroy());
}
