import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium as playwright, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { routeGroups } from '../../functions/registry.js';
import { findChromium, QUIET_CHROMIUM_FLAGS } from '../../shared/render/chromium.js';
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
if (!chromium)
  console.warn('api-reference: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the real-browser test is skipped');

/** How the page shows a summary: Markdown code marks dropped, whitespace collapsed. */
const plain = (text: string) => text.replace(/`/g, '').replace(/\s+/g, ' ').trim().toLowerCase();

const groups = routeGroups()
  .map((group) => ({ name: group.name, summaries: group.routes.filter((route) => !route.undocumented).map((route) => route.summary) }))
  .filter((group) => group.summaries.length > 0);

const operationCount = groups.reduce((count, group) => count + group.summaries.length, 0);

/** The sidebar's operation entries as the accessibility tree names them: `link "Create a thread HTTP Method: POST"`. */
const OPERATION_LINK = /link "(.+) HTTP Method: (\w+)"/;

/** Where the screenshots go: a temp dir of this run, kept after it so a person can look at them. */
const screenshotDir = mkdtempSync(join(tmpdir(), 'api-reference-'));

describe('GET /api/v2/docs serves the reference with its own script and a CSP that forbids other origins', () => {
  it('answers HTML with the CSP, and the renderer gzip-encoded from the same function', async () => {
    const pageResponse = await call('GET', '/docs');
    const script = await fetch(`${inject('localStack').stack.baseUrl}/api/v2/docs/api-reference.js`, {
      headers: { 'Accept-Encoding': 'gzip' },
    });

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
    browser = await playwright.launch({ executablePath: chromium!.path, headless: true, args: [...QUIET_CHROMIUM_FLAGS] });
  });

  afterAll(async () => {
    await browser?.close();
  });

  /**
   * A browser context in which every request of the page passes through here: ours go on, any
   * other origin's is recorded in `foreign` and never sent; CSP refusals are kept in the page.
   */
  async function isolatedContext(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; foreign: string[] }> {
    const { origin } = new URL(inject('localStack').stack.baseUrl);
    const context = await browser.newContext(viewport ? { viewport } : {});
    const foreign: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || new URL(url).origin === origin) return route.continue();
      foreign.push(url);
      return route.abort('blockedbyclient');
    });
    // Browser-side code as text: the page's DOM is not in this project's TypeScript libs.
    await context.addInitScript({
      content:
        "window.cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push({ directive: e.violatedDirective, blocked: e.blockedURI }));",
    });
    return { context, foreign };
  }

  it('lists the operations of every route group, and nothing is requested from another origin', async () => {
    const { origin } = new URL(inject('localStack').stack.baseUrl);
    const { context, foreign } = await isolatedContext();
    const failed: string[] = [];
    const page = await context.newPage();
    page.on('requestfailed', (request) => failed.push(`${request.url()} ${request.failure()?.errorText}`));

    try {
      const response = await page.goto(`${origin}/api/v2/docs`);
      expect(response?.status()).toBe(200);
      const last = groups.at(-1)!.summaries.at(-1)!;
      // Polled from here: waitForFunction's in-page polling evaluates its predicate with `eval`, which the
      // page's CSP refuses whenever the predicate is not already true on its first check (a loaded machine).
      const text = plain(
        await eventually(
          () => page.evaluate<string>('document.body.innerText'),
          (body) => plain(body).includes(plain(last)),
          30_000,
        ),
      );

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

  it.each([
    ['desktop', { width: 1280, height: 800 }],
    ['phone', { width: 390, height: 844 }],
  ] as const)(
    'reads well at %s width: every operation in the sidebar by a short name without backticks, and one is reachable from it (issue 29, item 4)',
    async (label, viewport) => {
      const { origin } = new URL(inject('localStack').stack.baseUrl);
      const { context, foreign } = await isolatedContext(viewport);
      const page = await context.newPage();

      try {
        await page.goto(`${origin}/api/v2/docs`);
        await page.getByRole('heading', { name: 'Review Board Service', level: 1 }).waitFor({ timeout: 30_000 });
        // A phone shows the sidebar behind the menu button.
        const menu = page.getByRole('button', { name: 'Open Menu' });
        if (await menu.isVisible()) await menu.click();
        const sidebar = page.getByRole('complementary', { name: /^Sidebar for / });
        const tree = await eventually(
          () => sidebar.ariaSnapshot(),
          (snapshot) => snapshot.split('\n').filter((line) => OPERATION_LINK.test(line)).length >= operationCount,
          30_000,
        );
        if (label === 'phone') await page.screenshot({ path: join(screenshotDir, 'phone-menu.png') });
        const entries = tree.split('\n').flatMap((line) => OPERATION_LINK.exec(line)?.[1] ?? []);
        const links = tree.split('\n').flatMap((line) => /link "([^"]+)"/.exec(line)?.[1] ?? []);

        expect(entries).toHaveLength(operationCount);
        expect(
          entries.filter((name) => name.length > 40),
          'sidebar entries longer than 40 characters',
        ).toEqual([]);
        expect(
          links.filter((name) => name.includes('`')),
          'sidebar entries with a backtick',
        ).toEqual([]);
        expect(entries).toContain('Request an upload policy, short path');

        await sidebar.getByRole('link', { name: 'Create a thread HTTP Method: POST' }).click();
        const heading = page.getByRole('heading', { name: 'Create a thread' }).first();
        await heading.waitFor({ timeout: 15_000 });
        await eventually(
          () => heading.isVisible(),
          (visible) => visible,
          15_000,
        );

        expect(await heading.isVisible()).toBe(true);
        expect(page.url()).toContain('#tag/threads/POST/api/v2/threads');
        expect(foreign).toEqual([]);
        const screenshot = join(screenshotDir, `${label}.png`);
        await page.screenshot({ path: screenshot });
        console.info(`api-reference: ${label} screenshot at ${screenshot}`);
      } finally {
        await context.close();
      }
    },
    90_000,
  );
});
