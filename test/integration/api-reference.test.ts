import { chromium as playwright, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { routeGroups } from '../../functions/registry.js';
import { findChromium } from '../../shared/render/chromium.js';
import { call } from '../support/api.js';
import { eventually } from '../support/polling.js';

/**
 * The API reference in a real browser (API reference issue, item 1): Debian's Chromium, driven by
 * playwright-core, opens GET /api/v2/docs on the local stack and must list every operation of every
 * documented route group (read from the registry, so a new route is expected without editing this
 * file), while every request that would leave for another origin is recorded and blocked, and the
 * page's CSP refuses nothing but one `eval` probe. Skipped where no Chromium is found, with the same lookup as the
 * thumbnail renderer's (CHROMIUM_PATH, then the usual install paths).
 */
const chromium = await findChromium({ chromiumPath: process.env.CHROMIUM_PATH });
if (!chromium) console.warn('api-reference: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the real-browser test is skipped');

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** How the page shows a summary: Markdown code marks dropped, whitespace collapsed. */
const plain = (text: string) => text.replace(/`/g, '').replace(/\s+/g, ' ').trim().toLowerCase();

const groups = routeGroups()
  .map((group) => ({ name: group.name, summaries: group.routes.filter((route) => !route.undocumented).map((route) => route.summary) }))
  .filter((group) => group.summaries.length > 0);

describe('GET /api/v2/docs serves the reference with its own script and a CSP that forbids other origins', () => {
  it('answers HTML with the CSP, and the renderer gzip-encoded from the same function', async () => {
    const pageResponse = await call('GET', '/docs');
    const script = await fetch(`${inject('localStack').stack.baseUrl}/api/v2/docs/api-reference.js`, { headers: { 'Accept-Encoding': 'gzip' } });

    expect(pageResponse.status).toBe(200);
    expect(pageResponse.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(pageResponse.headers.get('content-security-policy')).toMatch(/default-src 'none'.*script-src 'self'.*connect-src 'self'/);
    expect(pageResponse.body).toContain('src="docs/api-reference.js"');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-encoding')).toBe('gzip');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await script.text()).length).toBeGreaterThan(1_000_000);
  });

  it('leaves the pages and their script out of the OpenAPI document, which still describes every other route', async () => {
    const document = (await call('GET', '/openapi.json')).body;

    expect(document.paths['/api/v2/docs']).toBeUndefined();
    expect(document.tags.map((tag: { name: string }) => tag.name)).toEqual(groups.map((group) => group.name));
  });
});

describe.skipIf(!chromium)('the API reference in Chromium, with no network beyond the API', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await playwright.launch({ executablePath: chromium!.path, headless: true, args: FLAGS });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('lists the operations of every route group, and nothing is requested from another origin', async () => {
    const { origin } = new URL(inject('localStack').stack.baseUrl);
    const context = await browser.newContext();
    const foreign: string[] = [];
    const failed: string[] = [];
    // Every request of the page passes here: ours go on, any other origin's is recorded and never sent.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || new URL(url).origin === origin) return route.continue();
      foreign.push(url);
      return route.abort('blockedbyclient');
    });
    // Browser-side code as text: the page's DOM is not in this project's TypeScript libs.
    await context.addInitScript({
      content: "window.cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push({ directive: e.violatedDirective, blocked: e.blockedURI }));",
    });
    const page = await context.newPage();
    page.on('requestfailed', (request) => failed.push(`${request.url()} ${request.failure()?.errorText}`));

    try {
      const response = await page.goto(`${origin}/api/v2/docs`);
      expect(response?.status()).toBe(200);
      const last = groups.at(-1)!.summaries.at(-1)!;
      // Polled from here: waitForFunction's in-page polling evaluates its predicate with `eval`, which the
      // page's CSP refuses whenever the predicate is not already true on its first check (a loaded machine).
      const text = plain(await eventually(() => page.evaluate<string>('document.body.innerText'), (body) => plain(body).includes(plain(last)), 30_000));

      for (const group of groups) {
        expect(text, `tag ${group.name}`).toContain(group.name.toLowerCase());
        const missing = group.summaries.filter((summary) => !text.includes(plain(summary)));
        expect(missing, `operations of ${group.name} not listed`).toEqual([]);
      }
      expect(foreign).toEqual([]);
      expect(failed.filter((entry) => !entry.startsWith(origin))).toEqual([]);
      // The one refusal expected is `eval`: the renderer's schema library (Zod) probes `Function('')`
      // once and, refused, validates without generated code. Nothing else may be refused.
      const violations = await page.evaluate<{ directive: string; blocked: string }[]>('window.cspViolations');
      expect(violations.filter((violation) => violation.blocked !== 'eval')).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
