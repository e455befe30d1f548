import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium as playwright, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { findChromium } from '../../shared/render/chromium.js';
import { signInLinks } from './sign-in.js';

/**
 * The review app in Debian's Chromium (playwright-core): the browser, pages whose CSP refusals are
 * recorded, screenshots kept for a person to look at, and sign-in through the real emailed link
 * (read from the SES emulator, as a member would open it). Files that use it skip their browser
 * tests with `chromiumMissing`'s message where no Chromium is installed.
 */
export const chromium = await findChromium({ chromiumPath: process.env.CHROMIUM_PATH });

/** Warns once per file that its real-browser tests are skipped; answers whether they are. */
export function chromiumMissing(file: string): boolean {
  if (!chromium) console.warn(`${file}: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the real-browser tests are skipped`);
  return !chromium;
}

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const baseUrl = () => inject('localStack').stack.baseUrl;

export const launchBrowser = (): Promise<Browser> => playwright.launch({ executablePath: chromium!.path, headless: true, args: FLAGS });

export interface Watched {
  context: BrowserContext;
  page: Page;
  /** CSP refusals seen by the page and CSP messages on its console. */
  violations: string[];
}

/** A fresh browser context at `width` px whose pages report CSP refusals into `violations`. */
export async function watchedPage(browser: Browser, width: number): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  // Each step fails on its own, naming what it waited for, well before the test's timeout.
  context.setDefaultTimeout(15_000);
  const violations: string[] = [];
  await context.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
  });
  const page = await context.newPage();
  const watch = (watched: Page) =>
    watched.on('console', (message) => {
      if (/Content.Security.Policy|CSP violation/i.test(message.text())) violations.push(message.text());
    });
  watch(page);
  context.on('page', watch);
  return { context, page, violations };
}

/** A folder for this run's screenshots, printed so a person can open them. */
export function screenshotFolder(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${label}-`));
  mkdirSync(dir, { recursive: true });
  console.info(`${label}: screenshots in ${dir}`);
  return dir;
}

export const shot = (dir: string, page: Page, name: string, width: number) => page.screenshot({ path: join(dir, `${name}-${width}.png`), fullPage: true });

/** How far the page scrolls sideways (0 or less: it fits). */
export const horizontalOverflow = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

/**
 * Signs `email` in as a member does: on `page`, at the sign-in form (reached by a signed-out visit),
 * asks for a link, reads the link the SES emulator received and opens it in a new tab of the same
 * browser (where an emailed link opens). Answers that tab, signed in, wherever the app took it.
 */
export async function signInByEmail(context: BrowserContext, page: Page, email: string): Promise<Page> {
  const before = (await signInLinks(email, 0)).length;
  await page.getByRole('textbox', { name: 'Email' }).fill(email);
  await page.getByRole('button', { name: 'Send sign-in link' }).click();
  await page.getByRole('status').getByText(/Check your email/).waitFor();
  const links = await signInLinks(email, before + 1);
  const linkTab = await context.newPage();
  await linkTab.goto(links.at(-1)!.href);
  return linkTab;
}
