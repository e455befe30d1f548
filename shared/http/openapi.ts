import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { describePermission, ruleOf } from '../auth/permissions.js';
import { API_VERSION, VERSION_HEADER } from './api-handler.js';
import { PROBLEM_TYPE_PREFIX } from '../errors.js';
import { exampleOf } from './openapi-examples.js';
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

function schemaOf(schema: AnySchema, typeMode?: 'output'): JsonObject {
  const json = toJsonSchema(schema, { errorMode: 'ignore', target: 'draft-2020-12', ...(typeMode ? { typeMode } : {}) }) as JsonObject;
  delete json.$schema;
  return json;
}

/**
 * Query and path parameters of a route, from the entries of its valibot object schema. A parameter is
 * described by what its schema parses the string into (`typeMode: 'output'`): `queryInteger`'s digits
 * are an `integer` with their bounds, which is how OpenAPI writes a number in a query string. Its
 * default is the string the schema parses (`'50'`), given in the parameter's type.
 */
function parameters(schema: AnySchema | undefined, location: 'query' | 'path'): JsonObject[] {
  if (!schema) return [];
  const json = schemaOf(schema, 'output');
  const properties = (json.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  for (const property of Object.values(properties)) {
    if (property.type === 'integer' && typeof property.default === 'string') property.default = Number(property.default);
  }
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    schema: property,
    // Path parameters are always sent, so generated snippets show a value that passes validation.
    ...(location === 'path' ? { example: exampleOf(property, name) } : {}),
  }));
}

/**
 * Which credentials an operation takes, from the permission table: an API key wherever a key is
 * needed, an exchange token too where the permission admits end users (`endUser` not false), and a
 * session token wherever a member may (every row but the organization-key ones); only a session
 * token where the row is reserved to sessions. Operations that need no credential list none.
 */
export function securityOf(route: Pick<AnyRoute, 'auth' | 'permission'>): Record<string, string[]>[] {
  if (route.auth === 'none') return [];
  const rule = route.permission === undefined ? undefined : ruleOf(route.permission);
  if (rule?.sessionOnly) return [{ sessionToken: [] }];
  return [
    { bearer: [] },
    ...(rule && rule.endUser !== false ? [{ exchangeToken: [] }] : []),
    ...(rule?.organizationKey ? [] : [{ sessionToken: [] }]),
  ];
}

const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key, organization- or workspace-scoped: `Authorization: Bearer <API key>`.',
  },
  sessionToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A session token of the review app, sent as `Authorization: Bearer <session token>`: obtained from POST /auth/email-sign-in/verify ' +
      'with the code of an emailed sign-in link; it acts as the signed-in member in each workspace they belong to, with that ' +
      "membership's role (name the workspace with `workspaceId` where a route needs one). Lives 12 hours; POST /auth/sign-out revokes it.",
  },
  exchangeToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An exchange token, sent as `Authorization: Bearer <exchange token>`: obtained from POST /auth/exchange for a customer-signed ' +
      "JWT (RS256, verified with the installation's public key) or from POST /auth/sdk-exchange; it acts as an end user of one " +
      'workspace with the markup role it was minted with (project:viewer, project:contributor or project:owner), bound to one ' +
      'markup when the customer JWT named one. Accepted only by operations whose permission admits end users; lives minutes.',
  },
};

/** The vendor field that marks an operation beyond the spec's anchors (`Operation.extension`). */
export const EXTENSION_FIELD = 'x-review-board-extension';
const EXTENSION_NOTE = 'Extension: this operation is an addition of this service, beyond the API it is compatible with.';

/** A route group (one Lambda): an OpenAPI tag, so readers and generators see operations grouped as the code is. */
export interface RouteGroup {
  name: string;
  description: string;
  routes: readonly AnyRoute[];
}

const problemContent = (example: JsonObject) => ({
  'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' }, example },
});
const problemExample = (status: number, slug: string, title: string, detail: string, extra: JsonObject = {}) => ({
  type: `${PROBLEM_TYPE_PREFIX}${slug}`,
  title,
  status,
  detail,
  requestId: 'Xk3vTjR0oAMEJbA=',
  ...extra,
});

/** An idempotent operation's success responses may be replays (the header says so); a key reused or still in use has its own answers. */
function documentIdempotency(responses: Record<string, JsonObject>): void {
  for (const [status, response] of Object.entries(responses)) {
    if (status.startsWith('2')) response.headers = { [REPLAYED_HEADER]: { $ref: '#/components/headers/IdempotentReplayed' } };
  }
  responses['409'] ??= {
    description: `The first request with this ${IDEMPOTENCY_KEY_HEADER} is still running`,
    content: problemContent(
      problemExample(
        409,
        'idempotent-request-in-progress',
        'Conflict',
        `The first request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry in a moment to get its response.`,
      ),
    ),
  };
  responses['422'] ??= {
    description: `The ${IDEMPOTENCY_KEY_HEADER} was used with another request`,
    content: problemContent(
      problemExample(
        422,
        'idempotency-key-reused',
        'Unprocessable Content',
        `This ${IDEMPOTENCY_KEY_HEADER} was used with another request: send a new key for a new request.`,
      ),
    ),
  };
}

/** A `conditional` GET answers an `ETag` and a 304 to a current `If-None-Match`; a conditional write a 412 to a stale `If-Match`. */
function documentConditional(method: string, responses: Record<string, JsonObject>): void {
  if (method === 'GET') {
    const ok = responses['200'];
    if (ok) ok.headers = { ...(ok.headers as JsonObject | undefined), [ETAG_HEADER]: { $ref: '#/components/headers/ETag' } };
    responses['304'] = {
      description: `Not modified: the ${IF_NONE_MATCH_HEADER} lists the current ETag (no body)`,
      headers: { [ETAG_HEADER]: { $ref: '#/components/headers/ETag' } },
    };
    return;
  }
  responses['412'] = {
    description: `Precondition failed: the ${IF_MATCH_HEADER} names no current version; nothing was changed`,
    content: problemContent(
      problemExample(
        412,
        'precondition-failed',
        'Precondition Failed',
        `The ${IF_MATCH_HEADER} names version 3; the workspace is at version 4. Read it again, then retry.`,
      ),
    ),
  };
}

/**
 * The problems every operation of a kind can answer (`components.responses`), named by what makes
 * them possible: input (400), a credential (401, 403), a path parameter (404), a body (415, 413).
 * An operation's own description of a status replaces the shared one.
 */
const SHARED_PROBLEMS = {
  BadRequest: {
    status: 400,
    description: 'The input is not valid (`errors` names each field by JSON Pointer), or Service-API-Version names another version',
    content: problemContent(
      problemExample(400, 'validation-error', 'Validation Failed', '/query/limit: Invalid value', {
        errors: [{ pointer: '/query/limit', detail: 'Invalid value' }],
      }),
    ),
  },
  Unauthorized: {
    status: 401,
    description: 'No credential, or one that is not valid (unknown, revoked or expired)',
    content: problemContent(
      problemExample(401, 'unauthorized', 'Unauthorized', 'A valid credential is required: send Authorization: Bearer <API key>.'),
    ),
  },
  Forbidden: {
    status: 403,
    description: 'The credential is valid but its scope or role does not allow this operation (see its permission)',
    content: problemContent(problemExample(403, 'forbidden', 'Forbidden', 'The viewer role cannot create markups.')),
  },
  NotFound: {
    status: 404,
    description: 'Nothing the credential can see has this id',
    content: problemContent(problemExample(404, 'not-found', 'Not Found', 'No markup with this id.')),
  },
  UnsupportedMediaType: {
    status: 415,
    description: 'The body is not of the media type the operation takes',
    content: problemContent(
      problemExample(
        415,
        'unsupported-media-type',
        'Unsupported Media Type',
        'Send the request body as application/json (received text/plain).',
      ),
    ),
  },
  PayloadTooLarge: {
    status: 413,
    description:
      "The body is larger than the operation accepts (deployed, a body over the gateway's limit gets API Gateway's own 413 instead: see Size limits in the introduction)",
    content: problemContent(
      problemExample(
        413,
        'payload-too-large',
        'Payload Too Large',
        'The request body has 5242881 bytes; this operation accepts at most 5242880.',
      ),
    ),
  },
} as const;
type SharedProblem = keyof typeof SHARED_PROBLEMS;

function sharedProblemsOf(r: AnyRoute): SharedProblem[] {
  return [
    'BadRequest',
    ...(r.auth === 'apiKey' ? (['Unauthorized', 'Forbidden'] as const) : []),
    ...(r.params ? (['NotFound'] as const) : []),
    ...(r.body || r.rawBody ? (['UnsupportedMediaType'] as const) : []),
    ...(r.rawBody?.maxBytes !== undefined ? (['PayloadTooLarge'] as const) : []),
  ];
}

function responsesOf(r: AnyRoute): Record<string, JsonObject> {
  const responses: Record<string, JsonObject> = {};
  for (const name of sharedProblemsOf(r)) responses[String(SHARED_PROBLEMS[name].status)] = { $ref: `#/components/responses/${name}` };
  for (const response of r.responses) {
    const status = String(response.status);
    if (response.status >= 400) {
      responses[status] = {
        description: response.description,
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
    } else if (response.mediaType) {
      responses[status] = {
        description: response.description,
        content: { [response.mediaType]: { schema: { type: 'string', format: 'binary' } } },
      };
    } else if (response.status === 204 || !response.schema) {
      responses[status] = { description: response.description };
    } else {
      const payload = schemaOf(response.schema);
      const schema = response.envelope === false ? payload : { type: 'object', required: ['data'], properties: { data: payload } };
      // The example of a document-valued response (this document's own route) would be the document again.
      const example = response.envelope === false ? undefined : exampleOf(schema);
      responses[status] = {
        description: response.description,
        content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
      };
    }
  }
  if (r.idempotent) documentIdempotency(responses);
  if (r.conditional) documentConditional(r.method, responses);
  responses.default = {
    description: 'Any other problem (RFC 9457), such as 409, 402 or a 500 that tells nothing',
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  };
  return Object.fromEntries(
    Object.entries(responses).sort(([a], [b]) => (a === 'default' ? 1 : b === 'default' ? -1 : a.localeCompare(b))),
  );
}

const NO_CREDENTIAL = 'Needs no credential.';

const DESCRIPTION = [
  'The Review Board Service API: review boards (markups) made from a webpage, images, a PDF or a video, the comment threads pinned on them, their messages, uploads, embedded commenting and webhooks.',
  '- **Credentials**: `Authorization: Bearer <credential>`, an API key (organization- or workspace-scoped) or an exchange token (an end user of one workspace, from `POST /api/v2/auth/exchange`). Each operation lists the credentials it takes and, as `x-permission`, the row of the permission table it needs.',
  '- **Version**: send `Service-API-Version: 2023-02-22` (or nothing); every response echoes it.',
  '- **Success bodies** are `{ "data": ... }`; **problems** are `application/problem+json` (RFC 9457) with `type`, `title`, `status`, `detail`, `requestId`, and `errors` (`pointer`, `detail`) for invalid input.',
  '- **Lists** page with opaque cursors (`nextCursor`, `prevCursor`); a bad cursor is a 400.',
  '- **Size limits**: an operation that caps its body answers a larger one with a 413 problem (`POST /markups/file`: 20 MB). ' +
    "Deployed, a request body over API Gateway's payload limit (10 MB for an HTTP API) is answered by API Gateway itself: " +
    '413 with `{"message":"Request Entity Too Large"}`, not a problem document, because the function never sees the request ' +
    '(the local stack does the same above 20 MB). Lambda takes at most 6 MB of request payload, about 4.5 MB of file once base64-encoded: ' +
    'send larger files through the upload flow (`POST /uploads/upload-policy`, the storage form post, `POST /uploads/upload-complete`).',
  'This reference is served at `GET /api/v2/docs`; the document itself at `GET /api/v2/openapi.json`.',
].join('\n');

/**
 * The OpenAPI 3.1 document of the given route groups (or of bare routes, untagged), generated from
 * the same route tables and valibot schemas the handlers validate with, so it cannot drift from the
 * code. Each operation carries its request and success schemas (inside the `{ data }` envelope)
 * with an example, the problems it can answer, its security and its permission. Routes marked
 * `undocumented` (the reference page and its script) are routed but not described: they are not
 * API operations a client calls.
 */
export function buildOpenApi(source: readonly AnyRoute[] | readonly RouteGroup[], serverUrl = '/'): JsonObject {
  const groups: readonly RouteGroup[] =
    source.length > 0 && 'routes' in source[0]!
      ? (source as readonly RouteGroup[])
      : [{ name: '', description: '', routes: source as readonly AnyRoute[] }];
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const group of groups) {
    for (const r of group.routes) {
      if (r.undocumented) continue;
      (paths[r.path] ??= {})[r.method.toLowerCase()] = operationOf(r, group.name);
    }
  }
  const tags = groups
    .filter((group) => group.name && group.routes.some((r) => !r.undocumented))
    .map(({ name, description }) => ({ name, description }));
  return {
    openapi: '3.1.0',
    info: { title: 'Review Board Service', version: API_VERSION, description: DESCRIPTION },
    servers: [{ url: serverUrl }],
    ...(tags.length > 0 ? { tags } : {}),
    paths,
    components: {
      schemas: { Problem },
      responses: Object.fromEntries(
        Object.entries(SHARED_PROBLEMS).map(([name, { description, content }]) => [name, { description, content }]),
      ),
      parameters: {
        ApiVersion: {
          name: VERSION_HEADER,
          in: 'header',
          required: false,
          description: 'The API version; absent means this one.',
          schema: { type: 'string', enum: [API_VERSION] },
        },
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
          description:
            '`"<version>-<digest>"`: the record\'s version (what `If-Match` compares) and a digest of this answer (what `If-None-Match` compares).',
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

/** What a path alias (`pathAlias`) says instead of the canonical operation's description, which it points to. */
function aliasNote(canonical: string): string {
  return `Another path for \`${canonical}\`: the same operation, with the same body and answers. It stays so scripts written for this path keep working; new code calls \`${canonical}\`, whose description tells the whole flow.`;
}

function operationOf(r: AnyRoute, tag: string): JsonObject {
  // The permission table's row, so a reader sees who may call the operation (`x-permission`).
  const who = r.permission ? describePermission(r.permission) : r.auth === 'none' ? NO_CREDENTIAL : undefined;
  const description = [r.aliasOf ? aliasNote(r.aliasOf) : r.description, r.extension ? EXTENSION_NOTE : undefined, who]
    .filter(Boolean)
    .join('\n\n');
  const operation: JsonObject = {
    operationId: r.operationId,
    summary: r.summary,
    ...(description ? { description } : {}),
    ...(r.aliasOf ? { deprecated: true } : {}),
    ...(tag ? { tags: [tag] } : {}),
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
    responses: responsesOf(r),
    security: securityOf(r),
  };
  if (r.body) {
    const schema = schemaOf(r.body);
    operation.requestBody = { required: true, content: { 'application/json': { schema, example: exampleOf(schema) } } };
  }
  if (r.rawBody) {
    operation.requestBody = { required: true, content: { [r.rawBody.mediaType]: { schema: r.rawBody.schema ?? {} } } };
  }
  return operation;
}
