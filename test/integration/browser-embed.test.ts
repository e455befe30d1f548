import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium as playwright, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findChromium, QUIET_CHROMIUM_FLAGS } from '../../shared/render/chromium.js';
import { call, makeOrganization, VERSION, type Org } from '../support/api.js';
import { customerJwt, makeCustomerKeys, makeInstallation } from '../support/customer-jwts.js';
import { makeTypedMarkup, threadBody } from '../support/threads.js';

/**
 * The embedded client in a real browser (issue 11, "What it must show"): Debian's Chromium, driven
 * by playwright-core, loads a page from an origin the installation admits; the page exchanges a
 * customer JWT and opens a thread with cross-origin `fetch`. The same page from another origin is
 * stopped by the browser's CORS check before anything is sent. Skipped where no Chromium is found,
 * with the same lookup as the thumbnail renderer's (CHROMIUM_PATH, then the usual install paths).
 */
const chromium = await findChromium({ chromiumPath: process.env.CHROMIUM_PATH });
if (!chromium)
  console.warn('browser-embed: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the real-browser test is skipped');

/** What the page does: exchange the JWT, then open the thread with the exchange token; it reports each step. */
const PAGE = `<!doctype html><html><body><script>
window.embed = async ({ apiBase, version, token, thread }) => {
  const steps = {};
  try {
    const headers = { 'Content-Type': 'application/json', 'Service-API-Version': version };
    const exchanged = await fetch(apiBase + '/auth/exchange', { method: 'POST', headers, body: JSON.stringify({ token }) });
    steps.exchange = exchanged.status;
    const { data } = await exchanged.json();
    const created = await fetch(apiBase + '/threads', {
      method: 'POST',
      headers: { ...headers, Authorization: 'Bearer ' + data.exchangeToken },
      body: JSON.stringify(thread),
    });
    steps.thread = created.status;
    steps.requestId = created.headers.get('X-Request-Id');
    steps.threadId = (await created.json()).data.id;
  } catch (error) {
    steps.error = error.name + ': ' + error.message;
  }
  return steps;
};
</script></body></html>`;

/** A page server on loopback; each port is an origin of its own. */
async function servePage(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.skipIf(!chromium)('an embedded client in Chromium, across origins (issue 11 item 6)', () => {
  let context: BrowserContext;
  let userDataDir: string;
  let allowed: Awaited<ReturnType<typeof servePage>>;
  let refused: Awaited<ReturnType<typeof servePage>>;

  beforeAll(async () => {
    [allowed, refused] = await Promise.all([servePage(), servePage()]);
    userDataDir = mkdtempSync(join(tmpdir(), 'browser-embed-'));
    context = await playwright.launchPersistentContext(userDataDir, {
      executablePath: chromium!.path,
      headless: true,
      args: [...QUIET_CHROMIUM_FLAGS],
    });
  });

  afterAll(async () => {
    await context?.close();
    for (const page of [allowed, refused]) page?.server.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  async function embedFrom(
    origin: string,
    org: Org,
    installationKeys: ReturnType<typeof makeCustomerKeys>,
    config: { expectedAud: string; expectedIss: string },
    sub: string,
  ) {
    const markup = await makeTypedMarkup(org, 'webpage', { url: `${origin}/` });
    const page = await context.newPage();
    try {
      await page.goto(`${origin}/`);
      const token = await customerJwt(installationKeys, config, { sub });
      const apiBase = `${inject('localStack').stack.baseUrl}/api/v2`;
      const steps = await page.evaluate(
        (input) => (globalThis as unknown as { embed: (i: unknown) => Promise<Record<string, unknown>> }).embed(input),
        {
          apiBase,
          version: VERSION,
          token,
          thread: threadBody(markup),
        },
      );
      return { steps, markup };
    } finally {
      await page.close();
    }
  }

  it('exchanges a customer JWT and opens a thread from an allowed origin; the same page elsewhere is refused by CORS and writes nothing', async () => {
    const org = await makeOrganization();
    const keys = makeCustomerKeys();
    const { config } = await makeInstallation(org, keys, { allowedOrigins: [allowed.origin] });

    const sub = `browser-${Date.now()}`;
    const { steps, markup } = await embedFrom(allowed.origin, org, keys, config, sub);
    expect(steps, JSON.stringify(steps)).toMatchObject({
      exchange: 200,
      thread: 200,
      requestId: expect.any(String),
      threadId: expect.any(String),
    });
    const threads = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } });
    expect(threads.body.data.threads.map((thread: { id: string; user: { guest: boolean } }) => [thread.id, thread.user.guest])).toEqual([
      [steps.threadId, true],
    ]);

    const stranger = `browser-refused-${Date.now()}`;
    const elsewhere = await embedFrom(refused.origin, org, keys, config, stranger);
    expect(elsewhere.steps.error, JSON.stringify(elsewhere.steps)).toMatch(/^TypeError: Failed to fetch/);
    expect(elsewhere.steps.exchange).toBeUndefined();
    const none = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: elsewhere.markup.id } });
    expect(none.body.data.threads).toEqual([]);
    expect((await call('GET', `/users/external/${stranger}`, { key: org.workspaceKey })).status).toBe(404);
  });
});
