import { operation, routeTable } from '../../shared/http/route.js';
import { shippedFileReply } from '../../shared/http/shipped-file.js';
import { API_REFERENCE_HEADERS, API_REFERENCE_PAGE } from './api-reference.js';
import { API_REFERENCE_SCRIPT, OPENAPI_DOCUMENT } from './files.js';

const page = Buffer.from(API_REFERENCE_PAGE, 'utf8');

/**
 * The openapi group's table. Its document covers every route of the service: it is generated from
 * the route tables (`npm run routes:generate`; a unit test fails when it is out of date) and read
 * from a file shipped beside the bundle, so this function neither loads every operation's code nor
 * parses the document at cold start. The API reference (`/api/v2/docs`) renders that document in
 * the browser with a script served from here too; both routes are `undocumented`: they answer
 * HTML and JavaScript, not operations a client calls.
 */
export const openApiRoutes = routeTable({
  'GET /api/v2/openapi.json': operation({
    operationId: 'getOpenApiDocument',
    summary: 'Get the OpenAPI document',
    description: 'This OpenAPI 3.1 document.',
    auth: 'none',
    responses: [{ status: 200, description: 'The OpenAPI document', envelope: false }],
    handle: async ({ headers }) => shippedFileReply(OPENAPI_DOCUMENT, 'application/json', headers['accept-encoding']),
  }),
  'GET /api/v2/docs': operation({
    operationId: 'getApiReference',
    summary: 'The API reference: this document rendered for people',
    auth: 'none',
    undocumented: true,
    responses: [{ status: 200, description: 'An HTML page' }],
    handle: async () => ({
      status: 200,
      binary: { data: page, contentType: 'text/html; charset=utf-8' },
      headers: { ...API_REFERENCE_HEADERS, 'Cache-Control': 'no-cache' },
    }),
  }),
  'GET /api/v2/docs/api-reference.js': operation({
    operationId: 'getApiReferenceScript',
    summary: 'The script that renders the API reference',
    auth: 'none',
    undocumented: true,
    responses: [{ status: 200, description: 'JavaScript' }],
    handle: async ({ headers }) =>
      shippedFileReply(API_REFERENCE_SCRIPT, 'text/javascript; charset=utf-8', headers['accept-encoding'], {
        ...API_REFERENCE_HEADERS,
        'Cache-Control': 'public, max-age=3600',
      }),
  }),
});
