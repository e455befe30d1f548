import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium as playwright, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findChromium } from '../../shared/render/chromium.js';
import { contentSecurityPolicy } from '../../shared/http/web-app.js';
import { makeOrganization, type Org } from '../support/api.js';
import { makeMarkups } from '../support/markups.js';

/**
 * The review app served by the local gateway (issue 30, part 1 "Serving", and the sign-in screen):
 * app paths answer index.html with the security headers, assets are long-cached and a missing one
 * is a 404; in Debian's Chromium (skipped where none is found, with the thumbnail renderer's lookup)
 * the sign-in form is found by the roles and names DESIGN.md fixes, sends `{ email }`, a code link
 * signs in and goes back where the visitor was headed, failures show the problem's `detail`, and
 * the page's Content-Security-Policy refuses nothing the app does.
 *
 * The sign-in API (POST /auth/email-sign-in, /verify) is another branch's: here the browser's
 * requests to it are intercepted, their bodies checked, and answered as DESIGN.md says it answers;
 * the verify answer hands the app the organization's API key as its "session token", a
 * credential the real API accepts, so the landing and markup pages read the real API.
 */
const chromium = await findChromium({ chromiumPath: process.env.CHROMIUM_PATH });
if (!chromium) console.warn('review-app: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the real-browser tests are skipped');

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const WIDTHS = [1440, 390] as const;

const baseUrl = () => inject('localStack').stack.baseUrl;

async function indexScriptPath(): Promise<string> {
  const html = await (await fetch(`${baseUrl()}/`)).text();
  const script = /<script type="module" src="([^"]+)"><\/script>/.exec(html)?.[1];
  if (!script) throw new Error(`index.html loads no module script: ${html}`);
  return script;
}

describe('the gateway serves the review app beside the API', () => {
  it('answers an app path with index.html, the security headers and no-cache', async () => {
    const response = await fetch(`${baseUrl()}/markups/0b8ad1f2-52a4-4d63-bd3c-4f3d2d9e0d11`);
    const html = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-security-policy')).toBe(contentSecurityPolicy(inject('localStack').services.endpoints.s3));
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self'; /);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(html).toContain('<div id="app">');
    // Nothing inline: every script has a src, no style element or attribute.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=/);
  });

  it('answers any unknown app path with the same index.html, and the root too', async () => {
    const known = await (await fetch(`${baseUrl()}/sign-in`)).text();
    for (const path of ['/', '/no/such/screen', '/markups', '/sign-in/']) {
      const response = await fetch(`${baseUrl()}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.text(), path).toBe(known);
    }
  });

  it('serves the hashed script for a year, immutable, and 404s a missing asset instead of answering index.html', async () => {
    const script = await fetch(`${baseUrl()}${await indexScriptPath()}`);
    const missing = await fetch(`${baseUrl()}/assets/main-NOSUCHHASH.js`);
    const missingElsewhere = await fetch(`${baseUrl()}/favicon.ico`);

    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(script.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-content-type-options')).toBe('nosniff');
    expect(missingElsewhere.status).toBe(404);
  });

  it('leaves /api/ to the API, refuses writes to app paths and never leaves the build directory', async () => {
    const api = await fetch(`${baseUrl()}/api/v2/no-such-route`);
    const post = await fetch(`${baseUrl()}/sign-in`, { method: 'POST', body: 'x' });
    const escape = await fetch(`${baseUrl()}/assets/..%2f..%2fbuild.ts`);

    expect(api.headers.get('content-type')).toMatch(/problem\+json/);
    expect(api.headers.get('content-security-policy')).toBeNull();
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(escape.status).toBe(404);
  });
});

describe.skipIf(!chromium)('the review app in Chromium', () => {
  let browser: Browser;
  let org: Org;
  let markupName: string;
  let markupId: string;
  /** Screenshots of each screen at each width, kept after the run for a person to look at. */
  const screenshotDir = mkdtempSync(join(tmpdir(), 'review-app-'));

  beforeAll(async () => {
    browser = await playwright.launch({ executablePath: chromium!.path, headless: true, args: FLAGS });
    org = await makeOrganization('Review app org');
    markupName = `Homepage hero ${Math.random().toString(36).slice(2, 6)}`;
    const [markup] = await makeMarkups(org, 1, { name: () => markupName });
    markupId = markup!.id;
    mkdirSync(screenshotDir, { recursive: true });
    console.info(`review-app: screenshots in ${screenshotDir}`);
  });

  afterAll(async () => {
    await browser?.close();
  });

  interface Watched {
    context: BrowserContext;
    page: Page;
    /** CSP refusals seen by the page and CSP messages on its console. */
    violations: string[];
    signInBodies: unknown[];
  }

  /**
   * A page whose CSP refusals are recorded, and whose calls to the sign-in API are answered as
   * DESIGN.md says (202; a session for the code "good-code", 400 with a detail for any other).
   */
  async function watchedPage(width: number, options: { signInStatus?: number } = {}): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    // Each step fails on its own, naming what it waited for, well before the test's timeout.
    context.setDefaultTimeout(10_000);
    const violations: string[] = [];
    const signInBodies: unknown[] = [];
    await context.addInitScript({
      content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
    });
    await context.route('**/api/v2/auth/email-sign-in', async (route) => {
      signInBodies.push(route.request().postDataJSON());
      if (options.signInStatus && options.signInStatus !== 202) {
        await route.fulfill({
          status: options.signInStatus,
          contentType: 'application/problem+json',
          body: JSON.stringify({ type: 'about:blank', title: 'Too Many Requests', status: options.signInStatus, detail: 'Too many sign-in links for this address: try again in 10 minutes.' }),
        });
        return;
      }
      await route.fulfill({ status: 202, contentType: 'application/json', body: JSON.stringify({ data: { accepted: true } }) });
    });
    await context.route('**/api/v2/auth/email-sign-in/verify', async (route) => {
      const { code } = route.request().postDataJSON() as { code: string };
      if (code === 'good-code') {
        const session = { sessionToken: org.orgKey, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), user: { id: 'u1', email: 'owner@review-board.localhost', name: 'Owner' } };
        await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ data: session }) });
        return;
      }
      await route.fulfill({
        status: 400,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Bad Request', status: 400, detail: 'This sign-in link was already used or has expired: ask for a new one.' }),
      });
    });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content.Security.Policy|CSP violation/i.test(message.text())) violations.push(message.text());
    });
    return { context, page, violations, signInBodies };
  }

  async function shot(page: Page, name: string, width: number): Promise<void> {
    await page.screenshot({ path: join(screenshotDir, `${name}-${width}.png`), fullPage: true });
  }

  for (const width of WIDTHS) {
    it(`at ${width} px: the sign-in form by its roles and names sends { email } and confirms, with no CSP refusal`, async () => {
      const { context, page, violations, signInBodies } = await watchedPage(width);
      try {
        const response = await page.goto(`${baseUrl()}/sign-in`);
        expect(response?.headers()['content-security-policy']).toMatch(/^default-src 'none'/);
        await page.getByRole('heading', { name: 'Sign in to Review Board' }).waitFor();
        await shot(page, 'sign-in', width);

        await page.getByRole('textbox', { name: 'Email' }).fill('owner@review-board.localhost');
        await page.getByRole('button', { name: 'Send sign-in link' }).click();
        await page.getByRole('status').getByText(/Check your email/).waitFor();
        await shot(page, 'sign-in-sent', width);

        expect(signInBodies).toEqual([{ email: 'owner@review-board.localhost' }]);
        expect(violations).toEqual([]);
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow, 'no horizontal scrolling').toBeLessThanOrEqual(0);
      } finally {
        await context.close();
      }
    });

    it(`at ${width} px: a refused request shows the problem's detail, keyboard only`, async () => {
      const { context, page, violations } = await watchedPage(width, { signInStatus: 429 });
      try {
        await page.goto(`${baseUrl()}/sign-in`);
        await page.getByRole('textbox', { name: 'Email' }).waitFor();
        // Keyboard only: the heading has focus, Tab reaches the textbox, Enter submits.
        await page.keyboard.press('Tab');
        expect(await page.evaluate<string>('document.activeElement.id')).toBe('sign-in-email');
        await page.keyboard.type('someone@example.com');
        await page.keyboard.press('Enter');
        await page.getByRole('alert').getByText('Too many sign-in links for this address: try again in 10 minutes.').waitFor();
        await shot(page, 'sign-in-error', width);
        expect(violations).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it(`at ${width} px: a signed-out markupUrl leads to sign-in, the emailed link signs in and goes back to the markup`, async () => {
      const { context, page, violations } = await watchedPage(width);
      try {
        await page.goto(`${baseUrl()}/markups/${markupId}`);
        await page.waitForURL(`${baseUrl()}/sign-in`);
        await page.getByRole('button', { name: 'Send sign-in link' }).waitFor();

        // The emailed link usually opens in a new tab of the same browser.
        const linkTab = await context.newPage();
        await linkTab.goto(`${baseUrl()}/sign-in?code=good-code`);
        await linkTab.waitForURL(`${baseUrl()}/markups/${markupId}`);
        await linkTab.getByRole('heading', { name: markupName }).waitFor();
        await shot(linkTab, 'markup', width);

        await linkTab.getByRole('link', { name: 'All markups' }).click();
        await linkTab.waitForURL(`${baseUrl()}/`);
        await linkTab.getByRole('heading', { name: 'Your markups' }).waitFor();
        const link = linkTab.getByRole('link', { name: markupName });
        expect(await link.getAttribute('href')).toBe(`/markups/${markupId}`);
        await shot(linkTab, 'home', width);

        await linkTab.reload();
        await linkTab.getByRole('link', { name: markupName }).waitFor();
        await linkTab.getByRole('button', { name: 'Sign out' }).click();
        await linkTab.waitForURL(`${baseUrl()}/sign-in`);
        expect(violations).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it(`at ${width} px: a spent or wrong code says why and offers the form again`, async () => {
      const { context, page } = await watchedPage(width);
      try {
        await page.goto(`${baseUrl()}/sign-in?code=spent-code`);
        await page.getByRole('alert').getByText('This sign-in link was already used or has expired: ask for a new one.').waitFor();
        await page.getByRole('textbox', { name: 'Email' }).waitFor();
        expect(new URL(page.url()).search).toBe('');
        await shot(page, 'sign-in-bad-code', width);
      } finally {
        await context.close();
      }
    });
  }

  it('lays out every screen without horizontal scrolling from 360 to 1920 px', async () => {
    for (const width of [360, 1920]) {
      const { context, page } = await watchedPage(width);
      try {
        const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        await page.goto(`${baseUrl()}/sign-in`);
        await page.getByRole('button', { name: 'Send sign-in link' }).waitFor();
        expect(await overflow(), `sign-in at ${width}`).toBeLessThanOrEqual(0);
        await page.goto(`${baseUrl()}/sign-in?code=good-code`);
        await page.getByRole('link', { name: markupName }).waitFor();
        expect(await overflow(), `home at ${width}`).toBeLessThanOrEqual(0);
        await page.getByRole('link', { name: markupName }).click();
        await page.getByRole('heading', { name: markupName }).waitFor();
        expect(await overflow(), `markup at ${width}`).toBeLessThanOrEqual(0);
      } finally {
        await context.close();
      }
    }
  });

  it('a markup that does not exist shows the API\'s detail, not a blank page', async () => {
    const { context, page } = await watchedPage(1440);
    try {
      await page.goto(`${baseUrl()}/sign-in?code=good-code`);
      await page.getByRole('heading', { name: 'Your markups' }).waitFor();
      await page.goto(`${baseUrl()}/markups/0b8ad1f2-52a4-4d63-bd3c-4f3d2d9e0d11`);
      await page.getByRole('heading', { name: 'Markup not available' }).waitFor();
      expect((await page.getByRole('alert').innerText()).length).toBeGreaterThan(10);
      await shot(page, 'markup-error', 1440);
    } finally {
      await context.close();
    }
  });
});
