import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { compileRoutes, lambdaContext, type HttpHandler } from '../../infra/local/gateway.js';
import { getDb } from '../../shared/clients.js';
import { API_VERSION } from '../../shared/http/api-handler.js';
import type { AnyRoute } from '../../shared/http/route.js';

/**
 * Counting the DynamoDB requests of one operation, for tests that hold a request to a bounded
 * number of calls and for the bench, which checks that a floor makes the calls its request makes.
 * The counter is middleware on the document client every db module uses (`getDb()`); it shares
 * its stack with the underlying DynamoDBClient, so it sees every command. Calls are attributed to
 * the operation through async context, so background work in the same process (queue pollers,
 * other requests) is not counted.
 */

/** One DynamoDB call: the SDK command (`GetItemCommand`, `QueryCommand`, …) and its input. */
export interface CountedCall {
  command: string;
  input: Record<string, any>;
  /** Bytes of what DynamoDB answered (its JSON), a measure of the bytes the call read. */
  bytes?: number;
}

const current = new AsyncLocalStorage<CountedCall[]>();
const instrumented = new WeakSet<object>();

/** Adds the counter to this process's current document client (clients are replaced by `resetClients`). */
function instrument(): void {
  const client = getDb();
  if (instrumented.has(client)) return;
  instrumented.add(client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const call: CountedCall = { command: String(context.commandName), input: args.input as Record<string, any> };
      current.getStore()?.push(call);
      const result = await next(args);
      call.bytes = Buffer.byteLength(JSON.stringify(result.output ?? {}));
      return result;
    },
    // Initialize runs once per send: SDK retries of the same call are not counted again.
    { step: 'initialize', name: 'countDynamoDbRequests' },
  );
}

export interface Counted<T> {
  result: T;
  calls: CountedCall[];
  /** Bytes of every answer (`CountedCall.bytes`). */
  bytes: number;
  /** Calls by command name. */
  counts: Record<string, number>;
  total: number;
}

/** Runs `operation` and returns what it answered with the DynamoDB calls it made, in order. */
export async function countRequests<T>(operation: () => Promise<T>): Promise<Counted<T>> {
  instrument();
  const calls: CountedCall[] = [];
  const result = await current.run(calls, operation);
  return { result, calls, bytes: calls.reduce((sum, call) => sum + (call.bytes ?? 0), 0), counts: countsOf(calls), total: calls.length };
}

export function countsOf(calls: readonly CountedCall[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { command } of calls) counts[command] = (counts[command] ?? 0) + 1;
  return counts;
}

export interface InvokeRequest {
  key?: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** More request headers (any case; sent lower-cased, as API Gateway does). */
  headers?: Record<string, string>;
}

export interface InvokeResponse<T = any> {
  status: number;
  body: T;
}

/**
 * Hands one request to a route group's Lambda handler in this process, with the payload 2.0 event
 * the local gateway builds (route matched by the gateway's own `compileRoutes`). The handlers
 * behind the gateway run in the process that started the stack; this is how a test runs them
 * where it can count their calls. `path` is without the `/api/v2` prefix.
 */
export async function invokeHandler<T = any>(
  target: { name: string; routes: readonly AnyRoute[]; handler: unknown },
  method: string,
  path: string,
  request: InvokeRequest = {},
): Promise<InvokeResponse<T>> {
  const fullPath = `/api/v2${path}`;
  const found = compileRoutes([{ ...target, handler: target.handler as HttpHandler }])(method, fullPath);
  if (!found) throw new Error(`no route of ${target.name} matches ${method} ${fullPath}`);
  const query = Object.fromEntries(
    Object.entries(request.query ?? {})
      .filter((entry): entry is [string, string | number | boolean] => entry[1] !== undefined)
      .map(([name, value]) => [name, String(value)]),
  );
  const headers: Record<string, string> = { 'service-api-version': API_VERSION, host: '127.0.0.1' };
  if (request.key) headers.authorization = `Bearer ${request.key}`;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  const requestId = randomUUID();
  const now = new Date();
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: found.key,
    rawPath: fullPath,
    rawQueryString: new URLSearchParams(query).toString(),
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    pathParameters: found.params && Object.keys(found.params).length > 0 ? found.params : undefined,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: '127.0.0.1',
      domainPrefix: 'local',
      http: { method, path: fullPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'in-process' },
      requestId,
      routeKey: found.key,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    isBase64Encoded: false,
  };
  const result = (await (target.handler as HttpHandler)(event, lambdaContext(target.name, requestId))) as Exclude<
    APIGatewayProxyResultV2,
    string
  >;
  const text = typeof result.body === 'string' ? result.body : '';
  return { status: result.statusCode ?? 200, body: (text ? JSON.parse(text) : undefined) as T };
}
