import { ruleOf } from '../auth/permissions.js';
import { isOriginListed } from '../db/allowed-origins.js';
import { browserOrigin } from '../domain/installations/input.js';
import { logger } from '../logger.js';
import type { AnyRoute } from './route.js';

/**
 * CORS for embedded clients (issue 11 item 6). Browsers may call the routes end users can use
 * (`opensToBrowsers`) from an origin some live installation lists (the origin index,
 * `shared/db/allowed-origins.ts`). A granted response echoes that one origin with `Vary: Origin`,
 * never `*`; a request from any other origin gets no CORS header at all, so the browser withholds
 * the answer from the page. Preflights are answered by the `cors` function, actual requests by
 * the api-handler, both from here.
 */

/** Request headers the service reads; browsers must be allowed to send them cross-origin. */
export const CORS_ALLOW_HEADERS = ['Authorization', 'Content-Type', 'Service-API-Version', 'Idempotency-Key', 'If-Match', 'If-None-Match'];
/** Response headers browsers may read cross-origin. */
export const CORS_EXPOSE_HEADERS = ['Service-API-Version', 'X-Request-Id', 'Idempotent-Replayed', 'Retry-After', 'ETag'];
/** How long a browser may reuse a preflight answer (Chromium caps it at 2 hours). */
export const CORS_MAX_AGE_SECONDS = 600;
/**
 * How long a process trusts what the origin index said. A deleted installation's origin keeps its
 * grant at most this long in a warm function (a grant alone reads nothing: every route still
 * needs a credential); a new installation's origin is granted at once unless the same origin was
 * refused within `REFUSED_TTL_MS`.
 */
export const GRANT_TTL_MS = 60_000;
export const REFUSED_TTL_MS = 5_000;
/** Origins remembered per process; the oldest are forgotten first, so random origins cannot grow memory. */
const CACHE_LIMIT = 1_000;

/** The route that takes every preflight, in the deployed HTTP API and the local gateway alike. */
export const PREFLIGHT_PATH = '/{proxy+}';
export const PREFLIGHT_ROUTE_KEY = `OPTIONS ${PREFLIGHT_PATH}`;

const AUTH_PATH_PREFIX = '/api/v2/auth/';

/** Whether browsers may call the route cross-origin: it admits end users, or it is one of the token exchange routes. */
export function opensToBrowsers(route: Pick<AnyRoute, 'path' | 'auth' | 'permission'>): boolean {
  if (route.path.startsWith(AUTH_PATH_PREFIX)) return true;
  return route.auth === 'apiKey' && route.permission !== undefined && ruleOf(route.permission).endUser !== false;
}

const cache = new Map<string, { allowed: boolean; until: number }>();

/** Whether some live installation lists `origin`, from this process's cache when fresh. A failed lookup grants nothing. */
export async function isAllowedOrigin(origin: string, now = Date.now()): Promise<boolean> {
  const known = cache.get(origin);
  if (known && known.until > now) return known.allowed;
  let allowed: boolean;
  try {
    allowed = await isOriginListed(origin);
  } catch (error) {
    logger.warn('origin index lookup failed; no CORS grant', { origin, error });
    return false;
  }
  cache.delete(origin);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(origin, { allowed, until: now + (allowed ? GRANT_TTL_MS : REFUSED_TTL_MS) });
  return allowed;
}

/** Forgets every cached answer (tests that delete an installation and check its origin at once). */
export function forgetAllowedOrigins(): void {
  cache.clear();
}

/**
 * The CORS headers of an actual (non-preflight) response of `route` to a request carrying
 * `originHeader`: the grant when the route opens to browsers and the origin is allowed, else only
 * `Vary: Origin` on such routes (the answer depends on it), else nothing.
 */
export async function corsResponseHeaders(
  route: Pick<AnyRoute, 'path' | 'auth' | 'permission'> | undefined,
  originHeader: string | undefined,
): Promise<Record<string, string>> {
  if (!route || !opensToBrowsers(route)) return {};
  const origin = browserOrigin(originHeader);
  if (!origin || !(await isAllowedOrigin(origin))) return { Vary: 'Origin' };
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS.join(', '), Vary: 'Origin' };
}

/** The headers granting a preflight from `origin` for `methods`. */
export function preflightGrant(origin: string, methods: readonly string[]): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Methods': methods.join(', '),
    'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS.join(', '),
    'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
    Vary: 'Origin',
  };
}
