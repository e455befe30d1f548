import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { join, normalize, sep } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { PREFLIGHT_ROUTE_KEY } from '../../shared/http/cors.js';
import { compileTemplates } from '../../shared/http/route-match.js';
import { routeKey, type AnyRoute } from '../../shared/http/route.js';
import {
  cacheControlFor,
  contentTypeFor,
  EMBED_HEADERS,
  EMBED_PREFIX,
  isAppPath,
  webSecurityHeaderMap,
} from '../../shared/http/web-app.js';

export type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;

export interface GatewayTarget {
  name: string;
  routes: readonly AnyRoute[];
  isDefault?: boolean;
  /** Receives every OPTIONS request, as the HTTP API's `OPTIONS /{proxy+}` route does. */
  answersPreflight?: boolean;
  handler: HttpHandler;
}

/** Largest request body the local gateway accepts (POST /markups/file allows 20 MB). */
export const MAX_BODY_BYTES = 20 * 1024 * 1024;

/** Methods whose handlers write no event (the stream pump is not woken after them). */
const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const TEXT_TYPES = /^(text\/|application\/(json|.*\+json|xml|.*\+xml|x-www-form-urlencoded|javascript))/i;

/**
 * Matches a request against the route tables as API Gateway HTTP APIs do (`compileTemplates`:
 * the most specific template wins); OPTIONS requests go to the preflight function, other unmatched
 * requests to the `$default` route.
 */
export function compileRoutes(targets: readonly GatewayTarget[]) {
  const matcher = compileTemplates(
    targets.flatMap((target) => target.routes.map((r) => ({ method: r.method, path: r.path, key: routeKey(r), target }))),
  );
  const fallback = targets.find((target) => target.isDefault);
  const preflight = targets.find((target) => target.answersPreflight);
  return (method: string, path: string) => {
    if (method === 'OPTIONS' && preflight)
      return { key: PREFLIGHT_ROUTE_KEY, target: preflight, params: { proxy: path.replace(/^\/+/, '') } };
    const found = matcher.match(method, path);
    if (found) return { key: found.route.key, target: found.route.target, params: found.params };
    return fallback ? { key: '$default', target: fallback, params: undefined } : undefined;
  };
}

/** Builds the payload 2.0 event API Gateway would send for this request. */
export function toEvent(
  request: IncomingMessage,
  body: Buffer,
  key: string,
  params: Record<string, string> | undefined,
): APIGatewayProxyEventV2 {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'cookie') continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const contentType = headers['content-type'] ?? '';
  const isText = body.length === 0 || TEXT_TYPES.test(contentType);
  const now = new Date();
  const cookies = request.headers.cookie
    ?.split(';')
    .map((cookie) => cookie.trim())
    .filter(Boolean);
  return {
    version: '2.0',
    routeKey: key,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: cookies && cookies.length > 0 ? cookies : undefined,
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    pathParameters: params && Object.keys(params).length > 0 ? params : undefined,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: request.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: key,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : isText ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: !isText,
  };
}

/** The Lambda context a locally invoked handler gets. */
export function lambdaContext(name: string, requestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Writes a Lambda proxy result back as HTTP, as API Gateway does (plain values become 200 JSON). */
function writeResult(response: ServerResponse, result: APIGatewayProxyResultV2): void {
  if (typeof result === 'string' || result === null || typeof result !== 'object' || !('statusCode' in result)) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(typeof result === 'string' ? result : JSON.stringify(result));
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  const body = result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  if (body) headers['content-length'] = String(body.length);
  response.writeHead(result.statusCode ?? 200, headers);
  response.end(body);
}

function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** The review app's built files (web/dist), served as CloudFront serves them deployed. */
export interface WebFiles {
  dir: string;
  /** The origin presigned uploads and file URLs point at, which the Content-Security-Policy allows. */
  storageOrigin: string;
}

/**
 * Answers a path outside `/api/` from the app's files, as the web stack's distribution does: an app
 * path (no file extension) gets index.html, a file its bytes, a missing file 404; every answer
 * carries the app's security headers. Only GET and HEAD: anything else is a 405.
 */
async function serveWebFile(
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
  web: WebFiles,
  headers: Record<string, string>,
): Promise<void> {
  const method = request.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    response.writeHead(405, { ...headers, allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
    response.end('Method Not Allowed\n');
    return;
  }
  let file = isAppPath(path) ? '/index.html' : path;
  try {
    file = decodeURIComponent(file);
  } catch {
    file = '';
  }
  const resolved = normalize(join(web.dir, file));
  const body =
    file && !file.includes('\0') && resolved.startsWith(web.dir + sep) ? await readFile(resolved).catch(() => undefined) : undefined;
  if (!body) {
    response.writeHead(404, { ...headers, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache' });
    response.end(method === 'HEAD' ? undefined : 'Not Found\n');
    return;
  }
  response.writeHead(200, {
    ...headers,
    ...(file.startsWith(EMBED_PREFIX) ? EMBED_HEADERS : {}),
    'content-type': contentTypeFor(file),
    'content-length': String(body.length),
    'cache-control': cacheControlFor(file),
  });
  response.end(method === 'HEAD' ? undefined : body);
}

export interface Gateway {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** The local HTTP API: the same route tables and handler code that run behind API Gateway. */
export async function startGateway(
  targets: readonly GatewayTarget[],
  options: {
    port: number;
    host?: string;
    /**
     * After each request but GET, HEAD and OPTIONS a handler answered (the local stack wakes the stream pump: the handler may have written
     * an event).
     */
    onHandled?: () => void;
    /** The review app's files, for every path outside `/api/` (without it, such paths go to the route tables as before). */
    web?: WebFiles;
    /** WebSocket upgrades on this port (the live-update socket, `infra/local/live-sockets.ts`); without it, upgrades are refused. */
    upgrade?: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  },
): Promise<Gateway> {
  const match = compileRoutes(targets);
  const web = options.web ? { ...options.web, dir: normalize(options.web.dir).replace(/[\\/]+$/, '') } : undefined;
  const webHeaders = web ? webSecurityHeaderMap(web.storageOrigin) : {};
  const server = createServer(async (request, response) => {
    try {
      const body = await readBody(request);
      if (body === undefined) {
        response.writeHead(413, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ message: 'Request Entity Too Large' }));
        return;
      }
      const path = new URL(request.url ?? '/', 'http://localhost').pathname;
      if (web && !path.startsWith('/api/') && path !== '/api' && request.method !== 'OPTIONS') {
        await serveWebFile(request, response, path, web, webHeaders);
        return;
      }
      const found = match(request.method ?? 'GET', path);
      if (!found) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ message: 'Not Found' }));
        return;
      }
      const event = toEvent(request, body, found.key, found.params);
      const result = await found.target.handler(event, lambdaContext(found.target.name, event.requestContext.requestId));
      if (!READ_ONLY_METHODS.has(event.requestContext.http.method)) options.onHandled?.();
      writeResult(response, result);
    } catch (error) {
      process.stderr.write(`${JSON.stringify({ level: 'error', message: 'gateway: handler crashed', error: String(error) })}\n`);
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: 'Internal Server Error' }));
    }
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (options.upgrade) options.upgrade(request, socket, head);
    else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
