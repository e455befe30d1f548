import type * as v from 'valibot';
import type { Permission } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { IfMatch } from '../domain/common/versions.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type AnySchema = v.GenericSchema<unknown, unknown>;
type Out<S> = S extends AnySchema ? v.InferOutput<S> : undefined;

/** What an operation receives: validated input and the caller, never the raw API Gateway event. */
export interface OperationRequest<P, Q, B, A extends Auth> {
  params: P;
  query: Q;
  body: B;
  principal: A extends 'apiKey' ? Principal : undefined;
  requestId: string;
  headers: Record<string, string | undefined>;
  /** The `If-Match` of a write on a `conditional` route (`shared/http/etag.ts`); undefined when absent or elsewhere. */
  ifMatch?: IfMatch;
  /** The request's bytes, for routes declared with `rawBody` (undefined on every other route). */
  rawBody?: RawBody;
  /**
   * Where markup links point (`<appUrl>/markups/<id>`): the review app's origin (`resolveAppUrl`),
   * else the scheme and host the caller used (`https://abc.execute-api…`).
   */
  appUrl: string;
  /**
   * The caller's IP address, for rate limits: behind the web stack's distribution the viewer's
   * (`X-Viewer-Address`, trusted only with the distribution's `X-Origin-Verify`), else the source IP
   * API Gateway saw (`requestContext.http.sourceIp`). See `shared/http/viewer-address.ts`.
   */
  sourceIp: string;
}

/** A request body taken as bytes, not parsed as JSON. */
export interface RawBody {
  data: Buffer;
  /** The request's Content-Type header (with its parameters, such as a multipart boundary). */
  contentType: string;
}

/** How a route takes a non-JSON body. */
export interface RawBodySpec {
  /** The media type the body must have (415 otherwise), such as `multipart/form-data`. */
  mediaType: string;
  /** Larger bodies are refused with 413. */
  maxBytes?: number;
  /** JSON Schema of the body for the OpenAPI document. */
  schema?: Record<string, unknown>;
}

/** What an operation answers; `body` is sent as JSON, already in its `{ data }` envelope. */
export interface Reply {
  status: number;
  body?: unknown;
  /** Bytes to send as they are (API Gateway carries them base64-encoded), instead of a JSON body. */
  binary?: { data: Buffer; contentType: string };
  headers?: Record<string, string>;
  /**
   * The version of the record the answer shows (on `conditional` routes): with the body it makes
   * the `ETag` (`shared/http/etag.ts`).
   */
  version?: number;
}

export type Auth = 'apiKey' | 'none';

export interface ResponseDoc {
  status: number;
  description: string;
  /** Schema of the payload under `data` (or of the whole body when `envelope` is false). */
  schema?: AnySchema;
  envelope?: boolean;
  /** The body is bytes of this media type (`binary` replies, such as `image/png`), not JSON. */
  mediaType?: string;
}

/** One operation of the API: what it does, its schemas and its handler. A route table gives it its method and path. */
export interface Operation<PS = undefined, QS = undefined, BS = undefined, A extends Auth = Auth> {
  operationId: string;
  summary: string;
  description?: string;
  /**
   * The operation goes beyond the spec's anchors (an addition of this service): the OpenAPI document
   * marks it `x-review-board-extension: true` and says so in its description.
   */
  extension?: true;
  /**
   * This route is another path for the operation at this route key (`pathAlias`): routed like it, so
   * scripts that call the other path keep working, and marked deprecated in the OpenAPI document,
   * where it names the route to call instead.
   */
  aliasOf?: RouteKey;
  /**
   * Routed like any operation but left out of the OpenAPI document: it is not an API operation a
   * client calls (the API reference page and its script answer HTML and JavaScript, not `{ data }`).
   */
  undocumented?: true;
  auth: A;
  /**
   * The row of the permission table (`shared/auth/permissions.ts`) this operation needs; required
   * on `apiKey` routes, absent on `auth: 'none'` ones. The operation's loaders check it (`authorize`).
   */
  permission?: Permission;
  params?: PS;
  query?: QS;
  body?: BS;
  /** The route reads its body as bytes (for example a multipart upload) instead of a JSON `body`. */
  rawBody?: RawBodySpec;
  /**
   * The route takes an `Idempotency-Key` header (`shared/http/idempotency.ts`). Set in the route
   * tables with `idempotent(operation)`, so the tables are the one place that says which routes do.
   */
  idempotent?: true;
  /**
   * The route reads or writes one record by version (`shared/http/etag.ts`): a GET answers an
   * `ETag` and honours `If-None-Match`; a write honours `If-Match`. Set in the route tables with
   * `conditional(operation)`.
   */
  conditional?: true;
  responses: ResponseDoc[];
  handle(request: OperationRequest<Out<PS>, Out<QS>, Out<BS>, A>): Promise<Reply>;
}

/** An operation at its method and path. */
export interface Route<PS = undefined, QS = undefined, BS = undefined, A extends Auth = Auth> extends Operation<PS, QS, BS, A> {
  method: HttpMethod;
  /** API Gateway syntax: `/api/v2/markups/{id}`. */
  path: string;
}

// The erased shapes a route table holds; `operation()` keeps each entry's own types for its handler.
// `handle` is a method, so its parameter is checked bivariantly and no `any` is needed.
type SomeSchema = AnySchema | undefined;
export type AnyOperation = Operation<SomeSchema, SomeSchema, SomeSchema, Auth>;
export type AnyRoute = Route<SomeSchema, SomeSchema, SomeSchema, Auth>;

/** Declares one operation with its handler typed from its schemas. */
export function operation<
  PS extends AnySchema | undefined = undefined,
  QS extends AnySchema | undefined = undefined,
  BS extends AnySchema | undefined = undefined,
  A extends Auth = 'apiKey',
>(definition: Operation<PS, QS, BS, A>): AnyOperation {
  return definition as AnyOperation;
}

/**
 * Marks an operation idempotent where a route table lists it: `'POST /api/v2/threads': idempotent(createThreadOperation)`.
 * Only creates that answer 2xx JSON are marked: their response is what a retry gets replayed.
 */
export function idempotent(definition: AnyOperation): AnyOperation {
  if (definition.auth !== 'apiKey')
    throw new Error(`${definition.operationId} takes no credential, so it cannot take an Idempotency-Key (keys belong to a credential).`);
  return { ...definition, idempotent: true };
}

/**
 * Marks an operation as reading or writing one record by version where a route table lists it:
 * `'GET /api/v2/threads/{id}': conditional(getThreadOperation)`. Its handler answers `version` (a
 * GET) or checks `ifMatch` in the condition of its write.
 */
export function conditional(definition: AnyOperation): AnyOperation {
  return { ...definition, conditional: true };
}

/**
 * The same operation at a second path, where a route table lists it:
 * `'POST /api/v2/upload-policy': pathAlias('POST /api/v2/uploads/upload-policy', 'Request an upload policy, short path', operation)`.
 * It answers exactly as the canonical route; the OpenAPI document lists it once more, deprecated,
 * under its own summary and `<operationId>Alias`, and its description names the canonical route.
 */
export function pathAlias(canonical: RouteKey, summary: string, definition: AnyOperation): AnyOperation {
  return { ...definition, operationId: `${definition.operationId}Alias`, summary, aliasOf: canonical };
}

/** A route key as API Gateway writes it and `event.routeKey` carries it: `GET /api/v2/markups/{id}`. */
export type RouteKey = `${HttpMethod} /${string}`;

/**
 * A route group's table: each operation under the route key it answers, so the table shows every
 * method and path. An object literal cannot name a key twice, so no route is declared twice.
 */
export function routeTable(table: Record<RouteKey, AnyOperation>): readonly AnyRoute[] {
  return Object.entries(table).map(([key, definition]) => {
    // Fails at load (cold start, every test): a keyed route without a permission would go unchecked.
    if (definition.auth === 'apiKey' && !definition.permission)
      throw new Error(`${key} (${definition.operationId}) declares no permission.`);
    if (definition.auth === 'none' && definition.permission)
      throw new Error(`${key} (${definition.operationId}) needs no key, so it takes no permission.`);
    if (definition.aliasOf && !(definition.aliasOf in table))
      throw new Error(`${key} is an alias of ${definition.aliasOf}, which this table does not route.`);
    const [method, path] = key.split(' ') as [HttpMethod, string];
    return { ...definition, method, path };
  });
}

/** `GET /api/v2/workspace`, the form API Gateway puts in `event.routeKey`. */
export function routeKey(r: Pick<AnyRoute, 'method' | 'path'>): string {
  return `${r.method} ${r.path}`;
}

export const ok = (data: unknown, version?: number): Reply => ({
  status: 200,
  body: { data },
  ...(version !== undefined ? { version } : {}),
});

/** Where a page sits in its list; `prevCursor` only on lists that page back with `since`. */
export interface PageLinks {
  hasMore: boolean;
  nextCursor: string | null;
  prevCursor?: string | null;
}

/**
 * A page of a list, its links beside the items inside the envelope, as the spec's Response column
 * and the live service show it: `{ data: { data: [...], hasMore, nextCursor, prevCursor } }`, or
 * under `items` for child items. Existing clients read exactly these paths.
 */
export function okPage(items: readonly unknown[], links: PageLinks, key: 'data' | 'items' = 'data'): Reply {
  const page: Record<string, unknown> = { [key]: items, hasMore: links.hasMore, nextCursor: links.nextCursor };
  if (links.prevCursor !== undefined) page.prevCursor = links.prevCursor;
  return ok(page);
}
export const created = (data: unknown): Reply => ({ status: 201, body: { data } });
export const noContent = (): Reply => ({ status: 204 });
