/**
 * How the reference renders (Scalar's configuration, read from the page's `data-configuration`):
 * system fonts instead of its font CDN, no API client and no developer tools (they would offer to
 * reach other services), every tag open so each operation is listed at once.
 */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  defaultOpenAllTags: true,
  documentDownloadType: 'json',
};

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/'/g, '&#39;').replace(/</g, '&lt;');

/**
 * The reference page. Its URLs are relative (`/api/v2/docs` -> `/api/v2/openapi.json` and
 * `/api/v2/docs/api-reference.js`), so it works under any host and prefix. No inline script: the
 * configuration travels in data attributes of a non-executed JSON script element.
 */
export const API_REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Review Board Service API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<script id="api-reference" type="application/json" data-url="openapi.json" data-configuration='${escapeAttribute(JSON.stringify(SCALAR_CONFIGURATION))}'></script>
<script src="docs/api-reference.js"></script>
</body>
</html>
`;

/**
 * Nothing but this API: scripts, fetches, images and fonts from our own origin only (the renderer
 * injects its styles, hence inline styles; `data:` for its inline icons), and the page may not be
 * framed or post forms anywhere.
 */
export const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of the page and its script: no sniffing, no referrer, and the CSP above. */
export const API_REFERENCE_HEADERS = {
  'Content-Security-Policy': API_REFERENCE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};
