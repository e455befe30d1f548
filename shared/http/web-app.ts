/**
 * How the review app's static files are served, in one place for the local gateway
 * (infra/local/gateway.ts) and CloudFront (infra/stacks/web-stack.ts): which paths are app paths
 * (answered with index.html), how long each file may be cached, and the security headers every
 * file carries, a strict Content-Security-Policy first.
 */

/** Where the hashed script and stylesheet live (web/build.ts writes them there). */
export const HASHED_ASSETS_PREFIX = '/assets/';

/** Hashed files never change under their name: a year, immutable. */
export const CACHE_HASHED = 'public, max-age=31536000, immutable';
/** index.html and other unhashed files: always revalidated, so a deploy shows at the next load. */
export const CACHE_REVALIDATE = 'no-cache';

/**
 * The embeddable client (DESIGN.md "Embeddable client"): `${appUrl}/embed/v1/review-board.js`, an
 * unhashed module customers' pages import from their own origin, so it is served with
 * `Access-Control-Allow-Origin: *` (module scripts are fetched in CORS mode) and cached five
 * minutes: a deploy reaches every page within that time.
 */
export const EMBED_PREFIX = '/embed/';
export const EMBED_SCRIPT_PATH = '/embed/v1/review-board.js';
export const CACHE_EMBED = 'public, max-age=300';
export const EMBED_CACHE_SECONDS = 300;

export function cacheControlFor(path: string): string {
  if (path.startsWith(EMBED_PREFIX)) return CACHE_EMBED;
  return path.startsWith(HASHED_ASSETS_PREFIX) ? CACHE_HASHED : CACHE_REVALIDATE;
}

/** Headers the embed files add to the security headers: any page may load the module. */
export const EMBED_HEADERS: Record<string, string> = { 'access-control-allow-origin': '*', 'cross-origin-resource-policy': 'cross-origin' };

/**
 * An app path (a screen such as `/markups/{id}` or `/sign-in`) has no file extension in its last
 * segment and is not under `/api/`: it is answered with index.html. A path with an extension is a
 * file, and a missing file is a 404, never index.html (a broken asset link must fail visibly).
 * The CloudFront Function that rewrites app paths embeds this same expression.
 */
export const FILE_PATH_PATTERN = /\.[A-Za-z0-9]+$/;
export const isAppPath = (path: string): boolean =>
  !path.startsWith('/api/') && path !== '/api' && !path.startsWith(EMBED_PREFIX) && !FILE_PATH_PATTERN.test(path);

/**
 * The Content-Security-Policy of the app's files: nothing but the app's own scripts and styles (no
 * inline script or style, no eval); requests to the app's origin (the API is `/api/*` on it) and
 * to the storage origin that presigned uploads post to and file URLs point at; images and media
 * from both, plus `data:` and `blob:` (thumbnails and previews made in the page); never framed.
 * `liveOrigin`: where the live-update socket is when it is not the page's own origin (deployed,
 * the WebSocket API's `wss://` origin; locally the socket is on the gateway's port, which `'self'`
 * covers for `ws:` in CSP Level 3 browsers).
 */
export function contentSecurityPolicy(storageOrigin: string, liveOrigin?: string): string {
  // No URL parsing: deployed, the origin holds CDK tokens (the bucket's name, the region).
  const storage = /^(https?:\/\/[^/\s;,']+)\/?$/.exec(storageOrigin)?.[1];
  if (!storage) throw new Error(`The storage origin must be an http(s) origin: got "${storageOrigin}".`);
  const live = liveOrigin === undefined ? undefined : /^(wss?:\/\/[^/\s;,']+)\/?$/.exec(liveOrigin)?.[1];
  if (liveOrigin !== undefined && !live) throw new Error(`The live-update origin must be a ws(s) origin: got "${liveOrigin}".`);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src 'self' ${storage}${live ? ` ${live}` : ''}`,
    `img-src 'self' ${storage} data: blob:`,
    `media-src 'self' ${storage} blob:`,
    "font-src 'self'",
    "manifest-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

/** Two years, subdomains included (HSTS); browsers ignore it over plain http, as locally. */
export const HSTS_MAX_AGE_SECONDS = 63_072_000;

/**
 * The security headers of every static file, by their canonical values. CloudFront's response
 * headers policy is built from the same fields (`securityHeadersBehavior` for the first five,
 * `customHeadersBehavior` for `custom`).
 */
export interface WebSecurityHeaders {
  contentSecurityPolicy: string;
  contentTypeOptions: 'nosniff';
  frameOptions: 'DENY';
  referrerPolicy: 'no-referrer';
  strictTransportSecurity: { maxAgeSeconds: number; includeSubdomains: true };
  custom: Record<string, string>;
}

export function webSecurityHeaders(storageOrigin: string, liveOrigin?: string): WebSecurityHeaders {
  return {
    contentSecurityPolicy: contentSecurityPolicy(storageOrigin, liveOrigin),
    contentTypeOptions: 'nosniff',
    frameOptions: 'DENY',
    // The sign-in link carries its code in the query: no page of the app tells another site its URL.
    referrerPolicy: 'no-referrer',
    strictTransportSecurity: { maxAgeSeconds: HSTS_MAX_AGE_SECONDS, includeSubdomains: true },
    custom: {
      'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
      'Cross-Origin-Opener-Policy': 'same-origin',
    },
  };
}

/** The same set as HTTP headers (lower-case names), as the local gateway sends them. */
export function webSecurityHeaderMap(storageOrigin: string, liveOrigin?: string): Record<string, string> {
  const headers = webSecurityHeaders(storageOrigin, liveOrigin);
  return {
    'content-security-policy': headers.contentSecurityPolicy,
    'x-content-type-options': headers.contentTypeOptions,
    'x-frame-options': headers.frameOptions,
    'referrer-policy': headers.referrerPolicy,
    'strict-transport-security': `max-age=${headers.strictTransportSecurity.maxAgeSeconds}; includeSubDomains`,
    ...Object.fromEntries(Object.entries(headers.custom).map(([name, value]) => [name.toLowerCase(), value])),
  };
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
};

export function contentTypeFor(path: string): string {
  const extension = /\.[A-Za-z0-9]+$/.exec(path)?.[0].toLowerCase() ?? '';
  return CONTENT_TYPES[extension] ?? 'application/octet-stream';
}
