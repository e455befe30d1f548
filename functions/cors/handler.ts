import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { getConfig } from '../../shared/config.js';
import { API_VERSION, VERSION_HEADER } from '../../shared/http/api-handler.js';
import { isAllowedOrigin, opensToBrowsers, preflightGrant } from '../../shared/http/cors.js';
import { browserOrigin } from '../../shared/domain/installations/input.js';
import { compileTemplates } from '../../shared/http/route-match.js';
import type { HttpMethod } from '../../shared/http/route.js';
import { logger } from '../../shared/logger.js';
import { ROUTE_INDEX } from '../route-index.js';

getConfig();

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const matcher = compileTemplates(ROUTE_INDEX);

/** The methods browsers may use at `path`: those whose route (the one API Gateway would pick) opens to browsers. */
export function browserMethodsAt(path: string): HttpMethod[] {
  return METHODS.filter((method) => {
    const found = matcher.match(method, path);
    return found !== undefined && opensToBrowsers(found.route);
  });
}

/**
 * Answers every `OPTIONS` request (the HTTP API's `OPTIONS /{proxy+}` route; locally the gateway
 * sends them here too): 204, with a CORS grant only when the origin is allowed (`shared/http/cors.ts`)
 * and the requested method is one browsers may use at that path. Anything else gets no CORS header,
 * which the browser takes as a refusal.
 */
export async function handler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  const requestId = event.requestContext?.requestId ?? randomUUID();
  const methods = browserMethodsAt(event.rawPath);
  const requested = headers['access-control-request-method']?.trim().toUpperCase();
  const origin = browserOrigin(headers.origin);
  const granted =
    origin !== undefined && requested !== undefined && methods.includes(requested as HttpMethod) && (await isAllowedOrigin(origin));
  logger.info('preflight', { requestId, path: event.rawPath, origin: headers.origin, method: requested, granted });
  return {
    statusCode: 204,
    headers: {
      ...(granted ? preflightGrant(origin, methods) : methods.length > 0 ? { Vary: 'Origin' } : {}),
      [VERSION_HEADER]: API_VERSION,
      'X-Request-Id': requestId,
    },
  };
}
