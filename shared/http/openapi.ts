import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { describePermission, ruleOf } from '../auth/permissions.js';
import { API_VERSION, VERSION_HEADER } from './api-handler.js';
import { ETAG_HEADER, IF_MATCH_HEADER, IF_NONE_MATCH_HEADER } from './etag.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_WINDOW_SECONDS, REPLAYED_HEADER } from './idempotency.js';
import type { AnyRoute } from './route.js';

type AnySchema = v.GenericSchema<unknown, unknown>;
type JsonObject = Record<string, unknown>;

const Problem = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'requestId'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    requestId: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', required: ['pointer', 'detail'], properties: { pointer: { type: 'string' }, detail: { type: 'string' } } },
    },
  },
};

function schemaOf(schema: AnySchema): JsonObject {
  const json = toJsonSchema(schema, { errorMode: 'ignore', target: 'draft-2020-12' }) as JsonObject;
  delete json.$schema;
  return json;
}

/** Query and path parameters of a route, from the entries of its valibot object schema. */
function parameters(schema: AnySchema | undefined, location: 'query' | 'path'): JsonObject[] {
  if (!schema) return [];
  const json = schemaOf(schema);
  const properties = (json.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    schema: property,
  }));
}

/**
 * Which credentials an operation takes, from the permission table: an API key wherever a key is
 * needed, and an exchange token too where the permission admits end users (`endUser` not false).
 * Operations that need no credential list none.
 */
export function securityOf(route: Pick<AnyRoute, 'auth' | 'permission'>): Record<string, string[]>[] {
  if (route.auth === 'none') return [];
  const endUsers = route.permission !== undefined && ruleOf(route.permission).endUser !== false;
  return endUsers ? [{ bearer: [] }, { exchangeToken: [] }] : [{ bearer: [] }];
}

const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'An API key, organization- or workspace-scoped: `Authorization: Bearer <API key>`.' },
  exchangeToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An exchange token, sent as `Authorization: Bearer <exchange token>`: obtained from POST /auth/exchange for a customer-signed ' +
      'JWT (RS256, verified with the installation\'s public key) or from POST /auth/sdk-exchange; it acts as an end user of one ' +
      'workspace with the markup role it was minted with (project:viewer, project:contributor or project:owner), bound to one ' +
      'markup when the customer JWT named one. Accepted only by operations whose permission admits end users; lives minutes.',
  },
};

/** The vendor field that marks an operation beyond the spec's anchors (`Operation.extension`). */
export const EXTENSION_FIELD = 'x-review-board-extension';
const EXTENSION_NOTE = 'Extension: this operation is an addition of this service, beyond the API it is compatible with.';

const PROBLEM_CONTENT = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };

/** An idempotent operation's success responses may be replays (the header says so); a key reused or still in use has its own answers. */
function documentIdempotency(responses: Record<string, JsonObject>): void {
  for (const [status, response] of Object.entries(responses)) {
    if (status.startsWith('2')) response.headers = { [REPLAYED_HEADER]: { $ref: '#/components/headers/IdempotentReplayed' } };
  }
  responses['409'] ??= { description: `The first request with this ${IDEMPOTENCY_KEY_HEADER} is still running`, content: PROBLEM_CONTENT };
  responses['422'] ??= { description: `The ${IDEMPOTENCY_KEY_HEADER} was used with another request`, content: PROBLEM_CONTENT };
}

/** A `conditional` GET answers an `ETag` and a 304 to a current `If-None-Match`; a conditional write a 412 to a stale `If-Match`. */
function documentConditional(method: string, responses: Record<string, JsonObject>): void {
  if (method === 'GET') {
    const ok = responses['200'];
    if (ok) ok.headers = { ...(ok.headers as JsonObject | undefined), [ETAG_HEADER]: { $ref: '#/components/headers/ETag' } };
    responses['304'] = { description: `Not modified: the ${IF_NONE_MATCH_HEADER} lists the current ETag (no body)`, headers: { [ETAG_HEADER]: { $ref: '#/components/headers/ETag' } } };
    return;
  }
  responses['412'] = { description: `Precondition failed: the ${IF_MATCH_HEADER} names no current version; nothing was changed`, content: PROBLEM_CONTENT };
}

/**
 * The OpenAPI 3.1 document of the given routes, generated from the same route tables and valibot
 * schemas the handlers validate with, so it cannot drift from the code.
 */
export function buildOpenApi(routes: readonly AnyRoute[], serverUrl = '/'): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const r of routes) {
    const responses: Record<string, JsonObject> = {};
    for (const response of r.responses) {
      if (response.status === 204 || !response.schema) {
        responses[String(response.status)] = { description: response.description };
        continue;
      }
      const payload = schemaOf(response.schema);
      const body = response.envelope === false ? payload : { type: 'object', required: ['data'], properties: { data: payload } };
      responses[String(response.status)] = { description: response.description, content: { 'application/json': { schema: body } } };
    }
    if (r.idempotent) documentIdempotency(responses);
    if (r.conditional) documentConditional(r.method, responses);
    responses.default = { description: 'A problem (RFC 9457)', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
    // The permission table's row, so a reader sees who may call the operation (`x-permission`).
    const description = [r.description, r.extension ? EXTENSION_NOTE : undefined, r.permission ? describePermission(r.permission) : undefined].filter(Boolean).join('\n\n');
    const operation: JsonObject = {
      operationId: r.operationId,
      summary: r.summary,
      ...(description ? { description } : {}),
      ...(r.extension ? { [EXTENSION_FIELD]: true } : {}),
      ...(r.permission
        ? { 'x-permission': r.permission, 'x-minimum-role': ruleOf(r.permission).member, 'x-end-user-role': ruleOf(r.permission).endUser }
        : {}),
      parameters: [
        ...parameters(r.params, 'path'),
        ...parameters(r.query, 'query'),
        { $ref: '#/components/parameters/ApiVersion' },
        ...(r.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
        ...(r.conditional ? [{ $ref: `#/components/parameters/${r.method === 'GET' ? 'IfNoneMatch' : 'IfMatch'}` }] : []),
      ],
      responses,
      security: securityOf(r),
    };
    if (r.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(r.body) } } };
    }
    if (r.rawBody) {
      operation.requestBody = { required: true, content: { [r.rawBody.mediaType]: { schema: r.rawBody.schema ?? {} } } };
    }
    (paths[r.path] ??= {})[r.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Review Board Service', version: API_VERSION },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas: { Problem },
      parameters: {
        ApiVersion: { name: VERSION_HEADER, in: 'header', required: false, schema: { type: 'string', enum: [API_VERSION] } },
        IdempotencyKey: {
          name: IDEMPOTENCY_KEY_HEADER,
          in: 'header',
          required: false,
          description:
            `Makes the request safe to retry: the same request (method, path, query and body bytes) with the same key within ${IDEMPOTENCY_WINDOW_SECONDS / 3600} hours ` +
            `answers the first one's response again, with \`${REPLAYED_HEADER}: true\`, without doing the work or charging again. Another request with the key ` +
            'is a 422; a request sent while the first with the key still runs is a 409 (retry after `Retry-After`). Keys belong to the credential (an API ' +
            'key, or the end user of an exchange token). Only successful responses are kept: after an error the key may be used again.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
        },
        IfMatch: {
          name: IF_MATCH_HEADER,
          in: 'header',
          required: false,
          description:
            'Change only if the record is still at a version an ETag of it names (one or more, or `*` for any; weak `W/` tags never match): ' +
            'otherwise 412 and nothing changes. The version is checked in the condition of the write itself, so of two writers with one ETag one wins.',
          schema: { type: 'string' },
        },
        IfNoneMatch: {
          name: IF_NONE_MATCH_HEADER,
          in: 'header',
          required: false,
          description: 'Answer 304 with no body when the current ETag is one of these (weak comparison) or the value is `*`.',
          schema: { type: 'string' },
        },
      },
      headers: {
        ETag: {
          description: '`"<version>-<digest>"`: the record\'s version (what `If-Match` compares) and a digest of this answer (what `If-None-Match` compares).',
          schema: { type: 'string' },
        },
        IdempotentReplayed: {
          description: `\`true\` when this is the stored response of an earlier request with the same ${IDEMPOTENCY_KEY_HEADER}, not a new one.`,
          schema: { type: 'string', enum: ['true'] },
        },
      },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
