import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';
import { findChromium } from '../shared/render/chromium.js';
import { bundleAnchoring } from './anchoring.js';
import { EMBED_SCRIPT, ensureWebBuilt } from '../web/build.js';

/**
 * Issue 31 item 6, the embeddable client's mount speed (section `embed` of `npm run bench`): from
 * the thread list's arrival to 200 pins on the page, for the built module. The threads' anchors are
 * described on the page by web/anchoring (bundled by bench/anchoring.ts), the module the
 * client anchors with; how well and how fast that module anchors is bench/anchoring.ts's section.
 */
const html = (body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bench</title></head><body>${body}</body></html>`;

const rows = Array.from(
  { length: 400 },
  (_, index) =>
    `<tr><td>Item ${index} of the list</td><td class="owner">Owner ${index % 17}</td><td><a href="/i/${index}">Open item ${index}</a></td></tr>`,
).join('');
const prose = Array.from(
  { length: 200 },
  (_, index) => `<section><h2>Section ${index}</h2><p>Paragraph ${index} says something about topic ${index * 7}.</p></section>`,
).join('');
/** A long page: 200 sections and a table of 400 rows, about 2600 elements. */
const LONG_PAGE = `<main>${prose}<table><tbody>${rows}</tbody></table></main>`;
/** The 200 commented elements: every seventh paragraph or cell. */
const TARGETS_200 = `[...document.querySelectorAll('main p, main td')].filter((e, i) => i % 7 === 0).slice(0, 200)`;

export async function benchEmbedMount(): Promise<void> {
  const chromium = await findChromium({ chromiumPath: process.env.CHROMIUM_PATH });
  if (!chromium) {
    process.stdout.write('Embed client mount: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): skipped\n');
    return;
  }
  const code = await bundleAnchoring('iife');
  const browser = await playwright.launch({ executablePath: chromium.path, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    await benchMountSpeed(browser, await browser.newPage(), code);
  } finally {
    await browser.close();
  }
}

/**
 * Item 6: from the thread list's arrival to 200 pins on the page, for the built module mounted on
 * the long page. The API is answered by the browser's request interception (no network, no stack):
 * an exchange, the view modes, and one page of 200 threads anchored to the page's elements. Median
 * of 5 loads, each in a fresh page.
 */
async function benchMountSpeed(browser: Browser, anchorPage: Page, code: string): Promise<void> {
  const module = readFileSync(join(ensureWebBuilt(), EMBED_SCRIPT), 'utf8');
  await anchorPage.setContent(html(LONG_PAGE));
  await anchorPage.addScriptTag({ content: code });
  const described = await anchorPage.evaluate<{ elementPath: string; anchor: unknown }[]>(
    `(() => { const page = Anchoring.buildPageText(document); return ${TARGETS_200}.map((t) => Anchoring.describeElement(t, page)); })()`,
  );
  const site = 'https://site.bench';
  const app = 'https://app.bench';
  const now = Date.now();
  const threads = described.map(({ elementPath, anchor }, index) => ({
    id: `t${index}`,
    number: index + 1,
    resolved: index % 5 === 0,
    createdAt: now,
    user: { id: 'u', name: 'Bench' },
    scopes: [],
    messages: [
      { id: `m${index}`, createdAt: now, modifiedAt: now, content: `Comment ${index + 1}`, user: { id: 'u', name: 'Bench' }, scopes: [] },
    ],
    read: true,
    unreadMessageCount: 0,
    canonicalUrl: `${site}/`,
    elements: [{ path: elementPath, offsetXPercentage: 10, offsetYPercentage: 50 }],
    anchor,
  }));
  const json = (data: unknown) => ({
    status: 200,
    contentType: 'application/json',
    headers: { 'access-control-allow-origin': '*' },
    body: JSON.stringify({ data }),
  });
  const times: number[] = [];
  let pinned = threads.length;
  for (let run = 0; run < 5; run += 1) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.route(`${site}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: html(LONG_PAGE) }));
    await context.route(`${app}/**`, (route) => {
      const url = new URL(route.request().url());
      if (route.request().method() === 'OPTIONS')
        return route.fulfill({
          status: 204,
          headers: { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': '*' },
        });
      if (url.pathname === EMBED_PATH)
        return route.fulfill({
          status: 200,
          contentType: 'text/javascript',
          headers: { 'access-control-allow-origin': '*' },
          body: module,
        });
      if (url.pathname.endsWith('/auth/exchange'))
        return route.fulfill(
          json({
            exchangeToken: 'x',
            expiresAt: new Date(Date.now() + 300_000).toISOString(),
            workspaceId: 'w',
            userId: 'u',
            markupId: 'm',
          }),
        );
      if (url.pathname.endsWith('/threads'))
        return route.fulfill(json({ threads, query: { resolved: null }, offset: 0, total: threads.length, cursorId: null }));
      return route.fulfill({ status: 404, body: '' });
    });
    const page = await context.newPage();
    await page.goto(`${site}/`);
    const measured = await page.evaluate<{ afterThreads: number; pins: number }>(
      `(async () => {
        const { mount } = await import(${JSON.stringify(`${app}${EMBED_PATH}`)});
        await mount({ publicKey: 'pk', getToken: async () => 'jwt' });
        const root = document.querySelector('review-board-embed').shadowRoot;
        // Every thread shown: pinned, or listed as unanchored.
        while (root.querySelectorAll('.pin').length + root.querySelectorAll('.embed-panel li').length < 200) await new Promise((resolve) => requestAnimationFrame(resolve));
        await new Promise((resolve) => requestAnimationFrame(resolve));
        const shown = performance.now();
        const list = performance.getEntriesByType('resource').find((entry) => entry.name.includes('/threads?'));
        return { afterThreads: shown - list.responseEnd, pins: root.querySelectorAll('.pin').length };
      })()`,
    );
    times.push(measured.afterThreads);
    pinned = Math.min(pinned, measured.pins);
    await context.close();
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  process.stdout.write(
    `Embed client mounted with 200 threads on a page of about 2600 elements (${pinned} pinned): pins shown ${median.toFixed(0)} ms after the thread list arrived (median of 5; max ${times.at(-1)!.toFixed(0)} ms; target under 300 ms: ${median < 300 ? 'ok' : 'OVER TARGET'})\n`,
  );
}

const EMBED_PATH = `/${EMBED_SCRIPT}`;

const invokedPath = process.argv[1];
if (invokedPath && fileURLToPath(import.meta.url) === invokedPath) await benchEmbedMount();
