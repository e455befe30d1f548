import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium, renderThumbnail, type ChromiumBinary } from '../../shared/render/chromium.js';
import { addressPolicy, type AddressPolicy } from '../../shared/render/url-safety.js';

/**
 * Issue 18, item 8: a page the renderer may load must not make Chromium reach a private address by
 * any of the ways a page can (frames, images, fetch, websockets, script and meta-refresh
 * navigations, redirects, names that resolve or rebind to loopback). The "public" page is served
 * on 127.0.0.2 and allowed by address; the "private" server on 127.0.0.1 counts every connection.
 */
const chromium = await findChromium({ chromiumPath: process.env.CHROMIUM_PATH });
const renderable = chromium !== undefined || process.env.CI === 'true';
if (!renderable)
  console.warn('render-ssrf: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the page-load guard tests are skipped');

const PUBLIC_ADDRESS = '127.0.0.2';
let page: Server;
let secret: Server;
let pageUrl: string;
const pageHits: string[] = [];
const secretHits: string[] = [];
let secretConnections = 0;

function html(body: string, head = ''): string {
  return `<!doctype html><html><head>${head}</head><body style="background:#0a0">${body}</body></html>`;
}

beforeAll(async () => {
  secret = createServer((request, response) => {
    secretHits.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/html' }).end('secret');
  });
  secret.on('connection', () => (secretConnections += 1));
  await new Promise<void>((resolve) => secret.listen(0, '127.0.0.1', resolve));
  const port = (secret.address() as AddressInfo).port;
  const inside = (path: string, host = '127.0.0.1') => `http://${host}:${port}${path}`;

  const pages: Record<string, string> = {
    '/': html(
      [
        `<iframe src="${inside('/iframe')}"></iframe>`,
        `<img src="${inside('/img')}">`,
        `<img src="${inside('/mapped', '[::ffff:127.0.0.1]')}">`,
        `<img src="${inside('/decimal', '2130706433')}">`,
        `<img src="${inside('/by-name', 'private.test')}">`,
        `<img src="${inside('/rebound', 'rebind.test')}">`,
        `<iframe src="${inside('/localhost', 'localhost')}"></iframe>`,
        '<iframe src="/refresh-frame"></iframe>',
        '<iframe src="/script-frame"></iframe>',
        '<iframe src="/redirect"></iframe>',
        `<script>fetch(${JSON.stringify(inside('/fetch'))}).catch(() => {});
          try { new WebSocket(${JSON.stringify(inside('/ws').replace('http:', 'ws:'))}); } catch {}</script>`,
      ].join(''),
    ),
    '/refresh-frame': html('refreshing', `<meta http-equiv="refresh" content="0;url=${inside('/refresh')}">`),
    '/script-frame': html(`<script>location.href = ${JSON.stringify(inside('/script-navigation'))};</script>`),
  };
  page = createServer((request, response) => {
    pageHits.push(request.url ?? '');
    if (request.url === '/redirect') {
      response.writeHead(302, { location: inside('/redirected') }).end();
      return;
    }
    const body = pages[request.url ?? ''];
    if (body) response.writeHead(200, { 'content-type': 'text/html' }).end(body);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => page.listen(0, PUBLIC_ADDRESS, resolve));
  pageUrl = `http://${PUBLIC_ADDRESS}:${(page.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await Promise.all([new Promise((resolve) => page.close(resolve)), new Promise((resolve) => secret.close(resolve))]);
});

/** private.test is loopback; rebind.test answers the page's address once, loopback afterwards. */
function testResolver() {
  let rebinds = 0;
  return async (host: string): Promise<string[]> => {
    if (host === 'private.test') return ['127.0.0.1'];
    if (host === 'rebind.test') return [rebinds++ === 0 ? PUBLIC_ADDRESS : '127.0.0.1'];
    throw new Error(`no test name ${host}`);
  };
}

async function render(allowed: AddressPolicy): Promise<Buffer> {
  pageHits.length = 0;
  secretHits.length = 0;
  secretConnections = 0;
  return renderThumbnail(chromium as ChromiumBinary, pageUrl, { guard: { allowed, resolve: testResolver() }, timeoutMs: 60_000 });
}

describe('Chromium reaches nothing but what the address guard allows (no SSRF through the page)', () => {
  it.runIf(renderable)(
    'with loopback allowed (the local stack), the page does reach the private server every way it tries',
    async () => {
      await render(addressPolicy('local'));

      expect(pageHits).toEqual(expect.arrayContaining(['/', '/refresh-frame', '/script-frame', '/redirect']));
      expect(secretHits).toEqual(
        expect.arrayContaining([
          '/iframe',
          '/img',
          '/mapped',
          '/decimal',
          '/by-name',
          '/fetch',
          '/ws',
          '/refresh',
          '/script-navigation',
          '/redirected',
        ]),
      );
    },
    90_000,
  );

  it.runIf(renderable)(
    'with the deployed policy, the page renders and not one request or connection reaches the private server',
    async () => {
      const deployed = addressPolicy('aws');

      const png = await render((address) => address === PUBLIC_ADDRESS || deployed(address));

      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect(pageHits).toEqual(expect.arrayContaining(['/', '/refresh-frame', '/script-frame', '/redirect']));
      expect(secretHits).toEqual([]);
      expect(secretConnections).toBe(0);
    },
    90_000,
  );
});
