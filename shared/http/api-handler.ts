import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { authenticate } from '../auth/authenticate.js';
import { wasAuthorized, withPermission } from '../auth/authorize.js';
import { answerWhileLive } from '../auth/liveness.js';
import { getConfig } from '../config.js';
import { logger } from '../logger.js';
import { recordMetrics } from '../metrics.js';
import { traceWork } from '../tracing.js';
import type { Principal } from '../auth/principal.js';
import { BadRequestError, InternalError, NotFoundError, PayloadTooLargeError, ServiceError, ServiceUnavailableError } from '../errors.js';
import { MethodNotAllowedError, problemHeaders, UnsupportedMediaTypeError } from './errors.js';
import { corsResponseHeaders } from './cors.js';
import { ETAG_HEADER, entityTag, noneMatchHits, readIfMatch } from './etag.js';
import { IDEMPOTENCY_KEY_HEADER, readIdempotencyKey, REPLAYED_HEADER, requestFingerprint, runIdempotently } from './idempotency.js';
import { compileTemplates, type RouteMatcher, type RouteTemplate } from './route-match.js';
import { routeKey, type AnyRoute, type RawBody, type RawBodySpec, type Reply } from './route.js';
import { parseBody, parseWith } from './validation.js';
import { resolveAppUrl } from '../domain/organizations/app-url.js';
import { viewerAddressOf, withoutOriginProof } from './viewer-address.js';

export const VERSION_HEADER = 'Service-API-Version';
export const API_VERSION = '2023-02-22';

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

interface Dispatch {
  routes: Map<string, AnyRoute>;
  /** Every route of the service, for 405 answers on the `$default` route. */
  all: RouteMatcher<RouteTemplate>;
}

/**
 * The Lambda handler of one route group. Order of work: version header -> route -> JSON syntax ->
 * authenticate -> validate (valibot; the `Idempotency-Key` header) -> idempotency key -> operation
 * -> `{ data }`. Authentication comes before schema validation so an anonymous caller always gets
 * 401 and learns nothing about the input rules.
 */
export function createApiHandler(routes: readonly AnyRoute[], options: { allRoutes?: readonly RouteTemplate[] } = {}) {
  const dispatch: Dispatch = { routes: new Map(routes.map((r) => [routeKey(r), r])), all: compileTemplates(options.allRoutes ?? []) };
  return middy<Event, Result, Error, Context>()
    .use(responder(dispatch))
    .use(versionHeader())
    .use(idempotencyFingerprint(dispatch))
    .use(jsonBody(dispatch))
    .handler(async (event, context) => toResult(await invoke(dispatch, event, context)));
}

/** Who made each request in flight, for its log line. */
const callers = new WeakMap<Event, Principal>();

/** The log fields that say who called: principal kind (API key, member, end user), organization and workspace. */
function callerFields(principal: Principal | undefined): Record<string, string> {
  if (!principal) return {};
  if (principal.kind === 'session') return { principal: 'session', userId: principal.userId };
  const kind = principal.kind === 'endUser' ? 'endUser' : principal.actsAsMember ? 'member' : 'apiKey';
  return {
    principal: kind,
    organizationId: principal.organizationId,
    ...(principal.workspaceId ? { workspaceId: principal.workspaceId } : {}),
  };
}

/** The fingerprint of each request in flight that carries an `Idempotency-Key` on an idempotent route, taken before its body is parsed. */
const fingerprints = new WeakMap<Event, string>();

async function invoke(dispatch: Dispatch, event: Event, context: Context | undefined): Promise<Reply> {
  const found = dispatch.routes.get(event.routeKey);
  if (!found) throw unmatched(dispatch, event);
  const headers = lowerCaseHeaders(event.headers);
  const rawBody = found.rawBody ? readRawBody(found.rawBody, event, headers['content-type']) : undefined;
  const principal = found.auth === 'apiKey' ? withPermission(await authenticate(headers.authorization), found.permission!) : undefined;
  if (principal) callers.set(event, principal);
  // A dead exchange token is a 401 whatever the rest would have answered (`liveness.ts`).
  return answerWhileLive(principal, () => respond(found, event, context, headers, rawBody, principal));
}

async function respond(
  found: AnyRoute,
  event: Event,
  context: Context | undefined,
  headers: Record<string, string | undefined>,
  rawBody: RawBody | undefined,
  principal: Principal | undefined,
): Promise<Reply> {
  const params = found.params ? parseWith(found.params, event.pathParameters ?? {}, '/params') : undefined;
  const query = found.query ? parseWith(found.query, event.queryStringParameters ?? {}, '/query') : undefined;
  const body = found.body ? parseBody(found.body, event.body) : undefined;
  const idempotencyKey = found.idempotent ? readIdempotencyKey(headers) : undefined;
  const scheme = getConfig().mode === 'local' ? 'http' : 'https';
  const appUrl = (await resolveAppUrl()) ?? `${scheme}://${event.requestContext.domainName}`;
  const requestId = event.requestContext.requestId;
  const ifMatch = found.conditional && found.method !== 'GET' ? readIfMatch(headers) : undefined;
  const sourceIp = viewerAddressOf(headers, event.requestContext.http.sourceIp, getConfig().originVerify);
  const operation = async () =>
    withEntityTag(
      found,
      headers,
      await found.handle({
        params,
        query,
        body,
        rawBody,
        principal,
        requestId,
        headers: withoutOriginProof(headers),
        appUrl,
        sourceIp,
        ifMatch,
      }),
    );
  if (idempotencyKey !== undefined && principal) {
    const request = {
      principal,
      key: idempotencyKey,
      fingerprint: fingerprints.get(event)!,
      routeKey: event.routeKey,
      requestId,
      remainingMs: context?.getRemainingTimeInMillis?.(),
    };
    // A replay runs no operation and so checks no permission: it answers the credential what the key's first request, which checked it,
    // answered.
    return runIdempotently(request, async () => requireAuthorized(found, event, principal, await operation()));
  }
  return requireAuthorized(found, event, principal, await operation());
}

/**
 * The `ETag` of an answer on a `conditional` route that names its record's version; a GET whose
 * `If-None-Match` lists it answers 304 with no body (`etag.ts`).
 */
function withEntityTag(found: AnyRoute, headers: Record<string, string | undefined>, reply: Reply): Reply {
  const { version, ...rest } = reply;
  if (!found.conditional || version === undefined || reply.status !== 200) return rest;
  const etag = entityTag(version, reply.body);
  if (found.method === 'GET' && noneMatchHits(headers, etag)) return { status: 304, headers: { ...reply.headers, [ETAG_HEADER]: etag } };
  return { ...rest, headers: { ...reply.headers, [ETAG_HEADER]: etag } };
}

function requireAuthorized(found: AnyRoute, event: Event, principal: Principal | undefined, reply: Reply): Reply {
  if (principal && !wasAuthorized(principal)) {
    // Fail closed: an operation that answered without checking the permission table is a bug, never a success.
    logger.error('operation answered without authorizing', {
      routeKey: event.routeKey,
      operationId: found.operationId,
      permission: found.permission,
    });
    throw new InternalError();
  }
  return reply;
}

/**
 * The bytes of a route that takes a non-JSON body, checked where JSON bodies are parsed (before
 * authentication): the media type (415) and the size (413). API Gateway hands binary bodies over
 * base64-encoded.
 */
function readRawBody(spec: RawBodySpec, event: Event, contentType: string | undefined): RawBody {
  if (!contentType || contentType.split(';')[0]!.trim().toLowerCase() !== spec.mediaType) {
    throw new UnsupportedMediaTypeError(`Send the request body as ${spec.mediaType} (received ${contentType ?? 'no content type'}).`);
  }
  const data = event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  if (spec.maxBytes !== undefined && data.length > spec.maxBytes) {
    throw new PayloadTooLargeError(`The request body has ${data.length} bytes; this operation accepts at most ${spec.maxBytes}.`);
  }
  return { data, contentType };
}

function unmatched(dispatch: Dispatch, event: Event): ServiceError {
  const path = event.rawPath;
  const allowed = dispatch.all.methodsAt(path);
  if (allowed.length > 0) return new MethodNotAllowedError(allowed);
  return new NotFoundError(`No route matches ${event.requestContext.http.method} ${path}.`);
}

function toResult(reply: Reply): Result {
  const headers = { ...reply.headers };
  if (reply.binary) {
    return {
      statusCode: reply.status,
      headers: { 'Content-Type': reply.binary.contentType, ...headers },
      body: reply.binary.data.toString('base64'),
      isBase64Encoded: true,
    };
  }
  if (reply.body === undefined) return { statusCode: reply.status, headers };
  return {
    statusCode: reply.status,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(reply.body),
  };
}

function lowerCaseHeaders(headers: Event['headers'] | undefined): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
}

/** Rejects any version but the one the service speaks; absent means that one. */
function versionHeader(): middy.MiddlewareObj<Event, Result> {
  return {
    before: (request) => {
      const value = lowerCaseHeaders(request.event.headers)[VERSION_HEADER.toLowerCase()];
      if (value !== undefined && value.trim() !== API_VERSION) {
        throw new BadRequestError(
          `Unsupported ${VERSION_HEADER} "${value}". The supported version is ${API_VERSION}.`,
          'unsupported-api-version',
        );
      }
    },
  };
}

/**
 * Fingerprints the request (method, path, query, body bytes) on idempotent routes that carry an
 * `Idempotency-Key`, before the JSON parser replaces the body's bytes with its value.
 */
function idempotencyFingerprint(dispatch: Dispatch): middy.MiddlewareObj<Event, Result> {
  const header = IDEMPOTENCY_KEY_HEADER.toLowerCase();
  return {
    before: (request) => {
      if (!dispatch.routes.get(request.event.routeKey)?.idempotent) return;
      if (lowerCaseHeaders(request.event.headers)[header] === undefined) return;
      fingerprints.set(request.event, requestFingerprint(request.event));
    },
  };
}

/**
 * Parses JSON bodies for routes that take one. Middy's parser answers 415 for both a wrong media type
 * and broken JSON; broken JSON is the client's syntax error, so it becomes a 400 here.
 */
function jsonBody(dispatch: Dispatch): middy.MiddlewareObj<Event, Result> {
  const parser = httpJsonBodyParser();
  return {
    before: async (request) => {
      const found = dispatch.routes.get(request.event.routeKey);
      const raw = request.event.body;
      if (!found?.body || raw === undefined || raw === '') {
        if (found?.body) request.event.body = undefined;
        return;
      }
      try {
        await parser.before!(request as never);
      } catch (error) {
        const message = (error as Error).message;
        if (message.startsWith('Invalid or malformed JSON')) {
          throw new BadRequestError('The request body is not valid JSON.', 'malformed-json');
        }
        throw new UnsupportedMediaTypeError(
          `Send the request body as application/json (received ${request.event.headers?.['content-type'] ?? 'no content type'}).`,
        );
      }
    },
  };
}

/**
 * The one place that maps errors to responses and stamps every response with the version, the
 * request id and, on routes browsers may call, the CORS grant (`cors.ts`; looked up while the
 * operation runs). Unknown errors are logged in full and answered with a generic 500.
 */
function responder(dispatch: Dispatch): middy.MiddlewareObj<Event, Result> {
  const startedAt = new WeakMap<object, number>();
  const traces = new WeakMap<object, (error?: unknown) => void>();
  const grants = new WeakMap<object, Promise<Record<string, string>>>();
  const stamp = async (request: middy.Request<Event, Result>) => {
    traces.get(request.event)?.(request.error ?? undefined);
    const started = startedAt.get(request.event) ?? performance.now();
    const requestId = request.event.requestContext.requestId;
    const cors = (await grants.get(request.event)) ?? {};
    const response = (request.response ??= { statusCode: 204 });
    // nosniff on every answer: no body of ours (JSON, problems, thumbnail bytes) is ever read as another type.
    response.headers = {
      ...response.headers,
      ...cors,
      [VERSION_HEADER]: API_VERSION,
      'X-Request-Id': requestId,
      'X-Content-Type-Options': 'nosniff',
    };
    const status = response.statusCode ?? 200;
    const durationMs = Math.round(performance.now() - started);
    logger.info('request', {
      requestId,
      routeKey: request.event.routeKey,
      path: request.event.rawPath,
      status,
      durationMs,
      ...(response.headers[REPLAYED_HEADER] ? { idempotentReplay: true } : {}),
      ...callerFields(callers.get(request.event)),
    });
    recordMetrics(
      { Requests: 1, Latency: durationMs, ClientErrors: status >= 400 && status < 500 ? 1 : 0, ServerErrors: status >= 500 ? 1 : 0 },
      { route: request.event.routeKey },
    );
  };
  return {
    before: (request) => {
      logger.addContext(request.context);
      traces.set(request.event, traceWork(request.event.routeKey, { route: request.event.routeKey }));
      startedAt.set(request.event, performance.now());
      const origin = lowerCaseHeaders(request.event.headers).origin;
      if (origin !== undefined) grants.set(request.event, corsResponseHeaders(dispatch.routes.get(request.event.routeKey), origin));
    },
    after: (request) => stamp(request),
    onError: async (request) => {
      const error = request.error;
      const known = error instanceof ServiceError && error.expose ? error : undefined;
      const outOfTime = !known && isMiddyTimeout(error);
      if (outOfTime) logger.error('request ran out of time', { requestId: request.event.requestContext.requestId, error });
      else if (!known) logger.error('unhandled error', { requestId: request.event.requestContext.requestId, error });
      const problem =
        known ??
        (outOfTime
          ? new ServiceUnavailableError(
              'The request ran out of time before it finished, and part of it may be done: send it again (with the same Idempotency-Key where it takes one).',
              'timeout',
            )
          : new InternalError());
      request.response = {
        statusCode: problem.status,
        headers: { 'Content-Type': 'application/problem+json', ...problemHeaders(problem) },
        body: JSON.stringify({ ...problem.toJSON(), requestId: request.event.requestContext.requestId }),
      };
      await stamp(request);
    },
  };
}

/** middy's early answer when the function's time runs out (`timeoutEarlyResponse`): the work stopped, it did not fail. */
function isMiddyTimeout(error: unknown): boolean {
  return (
    error instanceof Error && error.name === 'TimeoutError' && (error as { cause?: { package?: unknown } }).cause?.package === '@middy/core'
  );
}
