import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium as playwright, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { findChromium, QUIET_CHROMIUM_FLAGS } from '../../shared/render/chromium.js';
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
  if (!chromium)
    console.warn(`${file}: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the real-browser tests are skipped`);
  return !chromium;
}

export const baseUrl = () => inject('localStack').stack.baseUrl;

/** Whether the element has the focus (in its document or shadow root). */
export const focused = (locator: Locator) => locator.evaluate((element) => element.matches(':focus'));

export const launchBrowser = (): Promise<Browser> =>
  playwright.launch({ executablePath: chromium!.path, headless: true, args: [...QUIET_CHROMIUM_FLAGS] });

export interface Watched {
  context: BrowserContext;
  page: Page;
  /** CSP refusals seen by the page and CSP messages on its console. */
  violations: string[];
}

/**
 * `violations` split: the live socket's refusals (a customer page whose CSP names only the app
 * origin refuses the ws(s) socket, and the client follows the event log instead: DESIGN.md
 * "Embeddable client"), as the set of refused socket URLs (Chromium reports each twice), and the others.
 */
export function besidesLiveSocket(violations: string[]): { others: string[]; refusedSockets: Set<string> } {
  const refused = (violation: string) => /wss?:\/\/[^'\s"]*\/api\/v2\/live\?ticket=[\w-]+/.exec(violation)?.[0];
  return {
    others: violations.filter((violation) => !refused(violation)),
    refusedSockets: new Set(violations.map(refused).filter((url) => url !== undefined)),
  };
}

/** A fresh browser context at `width` px whose pages report CSP refusals into `violations`. */
export async function watchedPage(browser: Browser, width: number): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  // Each step fails on its own, naming what it waited for, well before the test's timeout.
  context.setDefaultTimeout(15_000);
  const violations: string[] = [];
  await context.addInitScript({
    content:
      "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
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

/**
 * Holds back storage's answers to the form POSTs of `context` until the returned `release` is
 * called, so a progress bar can be seen (a local upload takes milliseconds).
 */
export async function holdStorageUploads(context: BrowserContext): Promise<() => void> {
  const storage = inject('localStack').services.endpoints.s3;
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  await context.route(`${storage}/**`, async (route) => {
    if (route.request().method() === 'POST') await held;
    await route.continue();
  });
  return () => release();
}

/** A folder for this run's screenshots, printed so a person can open them. */
export function screenshotFolder(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${label}-`));
  mkdirSync(dir, { recursive: true });
  console.info(`${label}: screenshots in ${dir}`);
  return dir;
}

export const shot = (dir: string, page: Page, name: string, width: number) =>
  page.screenshot({ path: join(dir, `${name}-${width}.png`), fullPage: true });

/** How far the page scrolls sideways (0 or less: it fits). */
export const horizontalOverflow = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

/**
 * Signs `email` in as a member does: on `page`, at the sign-in form (reached by a signed-out visit),
 * asks for a link, reads the link the SES emulator received and opens it in a new tab of the same
 * browser (where an emailed link opens). Answers that tab, signed in, wherever the app took it.
 */
export async function signInByEmail(context: BrowserContext, page: Page, email: string): Promise<Page> {
  const before = (await signInLinks(email, 0)).length;
  await page.getByRole('textbox', { name: 'Email' }).fill(email);
  await page.getByRole('button', { name: 'Send sign-in link' }).click();
  await page
    .getByRole('status')
    .getByText(/Check your email/)
    .waitFor();
  const links = await signInLinks(email, before + 1);
  const linkTab = await context.newPage();
  await linkTab.goto(links.at(-1)!.href);
  return linkTab;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

interface AxeCheck {
  message: string;
  data?: { contrastRatio?: number } | null;
}
interface AxeNode {
  target: unknown[];
  any: AxeCheck[];
  all: AxeCheck[];
  none: AxeCheck[];
}
interface AxeResult {
  id: string;
  impact: string | null;
  help: string;
  nodes: AxeNode[];
}

/**
 * axe-core's serious and critical violations on `page` as it stands (WCAG 2.1 A and AA and axe's
 * best practices), one readable line each: rule, help, the elements and why. axe's source is run by
 * the DevTools protocol (`page.evaluate`), which the app's Content-Security-Policy does not govern,
 * so the CSP stays as strict as it is served. Text exactly the colour of its background is only
 * "needs review" for axe (it may be hidden on purpose); the app hides nothing that way, so it counts
 * here as the serious contrast failure it is. Moderate and minor findings are printed, not answered.
 * `where` names the screen in the lines, e.g. "home at 390 px".
 */
export async function seriousAxeViolations(page: Page, where: string): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate<{ violations: AxeResult[]; incomplete: AxeResult[] }>(
    `axe.run(document, { runOnly: ${JSON.stringify(AXE_TAGS)}, resultTypes: ['violations', 'incomplete'] }).then((results) => ({ violations: results.violations, incomplete: results.incomplete }))`,
  );
  const invisible = results.incomplete
    .filter((result) => result.id === 'color-contrast')
    .map((result) => ({
      ...result,
      impact: 'serious',
      help: 'Text must not be the colour of its background',
      nodes: result.nodes.filter((node) => node.any.some((check) => check.data?.contrastRatio === 1)),
    }))
    .filter((result) => result.nodes.length > 0);
  const violations = [...results.violations, ...invisible];
  const line = (violation: AxeResult) => {
    const nodes = violation.nodes.map((node) => {
      const why = [...node.any, ...node.all, ...node.none].map((check) => check.message).filter(Boolean)[0];
      return `    ${node.target.map(String).join(' ')}${why ? `: ${why}` : ''}`;
    });
    return `${where}: ${violation.id} (${violation.impact}) ${violation.help}\n${nodes.join('\n')}`;
  };
  const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  const lesser = violations.filter((violation) => !serious.includes(violation));
  if (lesser.length) console.info(`axe, not failing:\n${lesser.map(line).join('\n')}`);
  return serious.map(line);
}
