import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { chromium as playwright, type Browser, type BrowserContext, type Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { recordConversionProgress } from '../../shared/db/conversion-progress.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { pendingPageScreenshots } from '../../shared/db/page-screenshots.js';
import { VIEW_MODES } from '../../shared/domain/markups/view-modes.js';
import { findChromium, QUIET_CHROMIUM_FLAGS } from '../../shared/render/chromium.js';
import { call, makeOrganization, type Org } from '../support/api.js';
import { conversionClients, makePendingMarkup, sendJob } from '../support/conversion-jobs.js';
import { makeMember } from '../support/members.js';
import { setPlan } from '../support/fixtures.js';
import { makePdf } from '../support/sample-files.js';
import { askSignIn, newSourceIp, signInLinks } from '../support/sign-in.js';
import { focused, holdStorageUploads, horizontalOverflow, seriousAxeViolations, watchedPage } from '../support/review-app-browser.js';
import { createThread, DESKTOP, makeTypedMarkup, MOBILE, TABLET } from '../support/threads.js';

/**
 * The board of issue 30 (parts 4 and 5) in Debian's Chromium, by the roles and names DESIGN.md
 * fixes ("The review app"): a member signs in through the link in the SES emulator, opens a
 * markup's `markupUrl`, sees each image, PDF page, video or page screenshot (role img, or a video)
 * named after the markup with its pins ("Comment N"), adds a comment by clicking the board (dialog
 * "New comment", textbox "Comment", "Post"), replies and resolves in dialog "Comment N", and sees a
 * comment made through the API after a reload. Every test signs in a member of its own (5 links per
 * address per 15 minutes). Screenshots of each board at 1440 and 390 px go to a folder it prints.
 */
const chromium = await findChromium({ chromiumPath: process.env.CHROMIUM_PATH });
if (!chromium)
  console.warn('review-board: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the real-browser tests are skipped');

const baseUrl = () => inject('localStack').stack.baseUrl;

/** A picture worth looking at in a screenshot: a gradient with a label, as PNG. */
function picture(label: string, width: number, height: number, hue: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="hsl(${hue},70%,85%)"/><stop offset="1" stop-color="hsl(${hue + 40},60%,55%)"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/><rect x="8%" y="10%" width="84%" height="14%" rx="8" fill="#fff" opacity="0.8"/><text x="50%" y="60%" font-family="sans-serif" font-size="${Math.round(height / 8)}" text-anchor="middle" fill="#1c2430">${label}</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** Puts bytes into the local bucket at `key` (the files a markup record written by the tests names). */
async function putObject(key: string, body: Buffer, contentType: string): Promise<void> {
  const { s3, services } = conversionClients();
  await s3.send(new PutObjectCommand({ Bucket: services.bucketName, Key: key, Body: body, ContentType: contentType }));
}

/** The markup as the API answers it to `key` (markupUrl, files). */
async function readMarkup(key: string, id: string): Promise<{ markupUrl: string; name: string; images?: { id: string }[] }> {
  const response = await call('GET', `/markups/${id}`, { key });
  if (response.status !== 200) throw new Error(`GET /markups/${id}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

const threadsOf = async (key: string, markupId: string): Promise<any[]> =>
  (await call('GET', '/threads', { key, query: { markupId, limit: 100 } })).body.data.threads;

describe.skipIf(!chromium)('the board in Chromium', () => {
  let browser: Browser;
  let org: Org;
  const screenshotDir = mkdtempSync(join(tmpdir(), 'review-board-'));

  beforeAll(async () => {
    browser = await playwright.launch({ executablePath: chromium!.path, headless: true, args: [...QUIET_CHROMIUM_FLAGS] });
    org = await makeOrganization('Review board org');
    console.info(`review-board: screenshots in ${screenshotDir}`);
  });

  afterAll(async () => {
    await browser?.close();
  });

  interface Session {
    context: BrowserContext;
    page: Page;
    violations: string[];
  }

  /**
   * A fresh contributor of `workspaceId` opens `markupUrl` signed out, is led to sign-in, asks for a
   * link (through the API, from a source IP of its own), opens the link from the SES emulator and
   * lands back on the markup.
   */
  async function signedInAt(
    markupUrl: string,
    workspaceId = org.workspaceId,
    width = 1440,
    role: 'contributor' | 'viewer' = 'contributor',
  ): Promise<Session> {
    const member = await makeMember(workspaceId, role, 'board');
    const { context, page, violations } = await watchedPage(browser, width);
    await page.goto(markupUrl);
    await page.waitForURL(`${baseUrl()}/sign-in`);
    const asked = await askSignIn(newSourceIp(), member.email);
    expect(asked.status).toBe(202);
    const [link] = await signInLinks(member.email, 1);
    await page.goto(link!.href);
    await page.waitForURL(markupUrl);
    return { context, page, violations };
  }

  /** Screenshots of the board at 1440 and 390 px wide, no horizontal scrolling and no serious axe-core violation at either. */
  async function shots(page: Page, name: string): Promise<void> {
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: 900 });
      // The layout at the new width: two animation frames, not a fixed wait.
      await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
      await page.screenshot({ path: join(screenshotDir, `${name}-${width}.png`), fullPage: true });
      const overflow = await horizontalOverflow(page);
      expect(overflow, `no horizontal scrolling at ${width} px`).toBeLessThanOrEqual(0);
      expect.soft(await seriousAxeViolations(page, `${name} at ${width} px`)).toEqual([]);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  }

  /** An image markup with two real pictures in the bucket. */
  async function imageMarkup(name: string, overrides: Partial<MarkupRecord> = {}): Promise<MarkupRecord> {
    const markup = await makeTypedMarkup(org, 'image', { name, ...overrides });
    await Promise.all(
      markup.images!.map(async (image, index) =>
        putObject(image.key, await picture(`Screen ${index + 1}`, 800, 600, 200 + index * 60), 'image/png'),
      ),
    );
    return markup;
  }

  it('an image markup: pins on the right image, add a comment by clicking, reply, resolve; an API comment appears after a reload', async () => {
    const name = `Landing page ${Math.random().toString(36).slice(2, 6)}`;
    const markup = await imageMarkup(name);
    const secondImage = markup.images![1]!.id;
    await createThread(org.workspaceKey, markup, {
      projectImageId: secondImage,
      offsetXPercentage: 70,
      offsetYPercentage: 30,
      message: undefined,
      content: 'The logo is blurry',
    });
    const designer = await makeMember(org.workspaceId, 'contributor', 'designer');
    const { markupUrl } = await readMarkup(org.workspaceKey, markup.id);
    const { context, page, violations } = await signedInAt(markupUrl);
    try {
      await page.getByRole('heading', { name }).waitFor();
      const images = page.getByRole('img', { name: new RegExp(`^${name}`) });
      await expect.poll(() => images.count()).toBe(2);
      // The API's pin sits on the second image, at its offsets.
      const second = page.locator('figure', { has: page.getByRole('img', { name: `${name}, image 2 of 2` }) });
      const pin1 = second.getByRole('button', { name: 'Comment 1', exact: true });
      await pin1.waitFor();
      const [box, pinBox] = [await second.getByRole('img').boundingBox(), await pin1.boundingBox()];
      expect(Math.abs(pinBox!.x + pinBox!.width / 2 - (box!.x + box!.width * 0.7))).toBeLessThan(3);
      expect(Math.abs(pinBox!.y + pinBox!.height / 2 - (box!.y + box!.height * 0.3))).toBeLessThan(3);
      await expect.poll(() => page.locator('.thread-list').getByText('The logo is blurry').count()).toBe(1);

      // Add a comment by clicking the first image at a quarter across, half down.
      await page.getByRole('button', { name: 'Add comment' }).click();
      const first = page.getByRole('img', { name: `${name}, image 1 of 2` });
      const firstBox = (await first.boundingBox())!;
      await first.click({ position: { x: firstBox.width * 0.25, y: firstBox.height * 0.5 } });
      const dialog = page.getByRole('dialog', { name: 'New comment' });
      await dialog.getByRole('textbox', { name: 'Comment' }).fill('Make the headline bigger');
      await shots(page, 'image-new-comment');
      await dialog.getByRole('button', { name: 'Post' }).click();
      await dialog.waitFor({ state: 'detached' });
      const pin2 = page.getByRole('button', { name: 'Comment 2', exact: true });
      await pin2.waitFor();
      // Focus returns to the new pin, and the list shows the new comment beside the pins.
      await expect.poll(() => pin2.evaluate((element) => element.matches(':focus'))).toBe(true);
      await expect.poll(() => page.locator('.thread-list').getByText('Make the headline bigger').count()).toBe(1);
      const created = (await threadsOf(org.workspaceKey, markup.id)).find((thread) => thread.number === 2);
      expect(created).toMatchObject({ projectImageId: markup.images![0]!.id, resolved: false });
      expect(created.offsetXPercentage).toBeCloseTo(25, 0);
      expect(created.offsetYPercentage).toBeCloseTo(50, 0);
      expect(created.messages[0].content).toBe('Make the headline bigger');
      await shots(page, 'image-board');

      // Open the thread, reply, resolve.
      await pin2.click();
      const thread = page.getByRole('dialog', { name: 'Comment 2' });
      await thread.getByRole('textbox', { name: 'Reply' }).fill('Agreed, 48 px');
      await thread.getByText('Mention people').click();
      await thread.getByRole('checkbox', { name: new RegExp(designer.email) }).check();
      await thread.getByRole('button', { name: 'Send' }).click();
      await thread.getByText('Agreed, 48 px').waitFor();
      await expect.poll(() => thread.getByRole('textbox', { name: 'Reply' }).inputValue()).toBe('');
      // "Send" is disabled while it works: the focus goes back to the reply box, never to the page's body.
      await expect.poll(() => focused(thread.getByRole('textbox', { name: 'Reply' }))).toBe(true);
      await thread.getByRole('button', { name: 'Resolve' }).click();
      await thread.getByRole('button', { name: 'Reopen' }).waitFor();
      await shots(page, 'image-thread');
      const resolved = (await threadsOf(org.workspaceKey, markup.id)).find((candidate) => candidate.number === 2);
      expect(resolved.resolved).toBe(true);
      expect(resolved.messages.map((message: { content: string }) => message.content)).toEqual([
        'Make the headline bigger',
        'Agreed, 48 px',
      ]);
      expect(resolved.messages[1].mentionIds).toEqual([designer.userId]);
      await thread.getByText(/^Mentioned: /).waitFor();

      // One's own message can be edited: the edit box takes the focus, and after saving its Edit button has it again.
      await thread.getByRole('button', { name: 'Edit message 2' }).click();
      await expect.poll(() => focused(thread.getByRole('textbox', { name: 'Edit message' }))).toBe(true);
      await thread.getByRole('textbox', { name: 'Edit message' }).fill('Agreed, 56 px');
      await thread.getByRole('button', { name: 'Save' }).click();
      await thread.getByText('Agreed, 56 px').waitFor();
      await expect.poll(() => focused(thread.getByRole('button', { name: 'Edit message 2' }))).toBe(true);
      await expect
        .poll(async () => (await threadsOf(org.workspaceKey, markup.id)).find((candidate) => candidate.number === 2).messages[1].content)
        .toBe('Agreed, 56 px');

      // Deleting a message asks first, as deleting a thread does; "Keep it" gives the focus back.
      await thread.getByRole('textbox', { name: 'Reply' }).fill('A reply to take back');
      await thread.getByRole('button', { name: 'Send' }).click();
      await thread.getByText('A reply to take back').waitFor();
      await thread.getByRole('button', { name: 'Delete message 3' }).click();
      const confirm = thread.getByRole('group', { name: 'Delete message 3?' });
      await expect.poll(() => focused(confirm.getByRole('button', { name: 'Yes, delete message 3' }))).toBe(true);
      await shots(page, 'message-delete-confirmation');
      await confirm.getByRole('button', { name: 'Keep it' }).click();
      await expect.poll(() => focused(thread.getByRole('button', { name: 'Delete message 3' }))).toBe(true);
      expect((await threadsOf(org.workspaceKey, markup.id)).find((candidate) => candidate.number === 2).messages).toHaveLength(3);
      await thread.getByRole('button', { name: 'Delete message 3' }).click();
      await thread.getByRole('button', { name: 'Yes, delete message 3' }).click();
      await thread.getByText('A reply to take back').waitFor({ state: 'detached' });
      await expect.poll(() => focused(thread.getByRole('textbox', { name: 'Reply' }))).toBe(true);
      expect((await threadsOf(org.workspaceKey, markup.id)).find((candidate) => candidate.number === 2).messages).toHaveLength(2);

      // Escape closes the dialog and gives the focus back to the pin.
      await page.keyboard.press('Escape');
      await thread.waitFor({ state: 'detached' });
      await expect.poll(() => pin2.evaluate((element) => element.matches(':focus'))).toBe(true);

      // The filter shows open or resolved comments, pins and list alike.
      await page.getByRole('combobox', { name: 'Show' }).selectOption('open');
      await pin2.waitFor({ state: 'detached' });
      expect(await pin1.count()).toBe(1);
      expect(await page.locator('.thread-list').getByText('Make the headline bigger').count()).toBe(0);
      await page.getByRole('combobox', { name: 'Show' }).selectOption('all');

      // A comment made through the API appears after a reload.
      await createThread(org.workspaceKey, markup, {
        projectImageId: secondImage,
        offsetXPercentage: 20,
        offsetYPercentage: 80,
        message: undefined,
        content: 'Footer links are grey on grey',
      });
      await page.reload();
      await page.getByRole('button', { name: 'Comment 3', exact: true }).waitFor();
      await second.getByRole('button', { name: 'Comment 3', exact: true }).waitFor();
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('keyboard only: Add comment, Enter places the pin, Post, open the pin, Escape returns the focus', async () => {
    const name = `Keyboard review ${Math.random().toString(36).slice(2, 6)}`;
    const markup = await imageMarkup(name);
    const { markupUrl } = await readMarkup(org.workspaceKey, markup.id);
    const { context, page } = await signedInAt(markupUrl);
    try {
      const add = page.getByRole('button', { name: 'Add comment' });
      await add.focus();
      await page.keyboard.press('Enter');
      await expect
        .poll(() => page.getByRole('img', { name: `${name}, image 1 of 2` }).evaluate((element) => element.matches(':focus')))
        .toBe(true);
      expect.soft(await seriousAxeViolations(page, 'adding a comment at 1440 px')).toEqual([]);
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'New comment' });
      await expect.poll(() => dialog.getByRole('textbox', { name: 'Comment' }).evaluate((element) => element.matches(':focus'))).toBe(true);
      await page.keyboard.type('Keyboard comment');
      // Past "Mention people" to "Post".
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await expect.poll(() => dialog.getByRole('button', { name: 'Post' }).evaluate((element) => element.matches(':focus'))).toBe(true);
      await page.keyboard.press('Enter');
      const pin = page.getByRole('button', { name: 'Comment 1', exact: true });
      await pin.waitFor();
      await expect.poll(() => pin.evaluate((element) => element.matches(':focus'))).toBe(true);
      await page.keyboard.press('Enter');
      const thread = page.getByRole('dialog', { name: 'Comment 1' });
      await thread.getByText('Keyboard comment').waitFor();
      await page.keyboard.press('Escape');
      await thread.waitFor({ state: 'detached' });
      await expect.poll(() => pin.evaluate((element) => element.matches(':focus'))).toBe(true);
      const [created] = await threadsOf(org.workspaceKey, markup.id);
      expect(created).toMatchObject({ number: 1, offsetXPercentage: 50, offsetYPercentage: 50, projectImageId: markup.images![0]!.id });
      // Escape also leaves "Add comment" mode without placing anything.
      await add.click();
      await page.keyboard.press('Escape');
      await expect.poll(() => add.getAttribute('aria-pressed')).toBe('false');

      // One's own thread can be deleted after a confirmation in the dialog (no native confirm); "Keep it" keeps it.
      await pin.click();
      const threadDialog = page.getByRole('dialog', { name: 'Comment 1' });
      await threadDialog.getByRole('button', { name: 'Delete thread' }).click();
      await threadDialog.getByRole('button', { name: 'Keep it' }).click();
      await threadDialog.getByRole('button', { name: 'Delete thread' }).click();
      const confirm = threadDialog.getByRole('group', { name: 'Delete comment 1?' }).getByRole('button', { name: 'Delete comment 1' });
      await expect.poll(() => confirm.evaluate((element) => element.matches(':focus'))).toBe(true);
      await page.keyboard.press('Enter');
      await pin.waitFor({ state: 'detached' });
      await expect.poll(() => add.evaluate((element) => element.matches(':focus'))).toBe(true);
      expect(await threadsOf(org.workspaceKey, markup.id)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a PDF markup appears without a reload once converted, with pins per page; a click on page 2 comments on page 2', async () => {
    const clients = conversionClients();
    const { org: pdfOrg, markup } = await makePendingMarkup(clients, {
      type: 'pdf',
      bytes: await makePdf([
        { width: 612, height: 792 },
        { width: 612, height: 792 },
      ]),
      filename: 'Brief.pdf',
      mimeType: 'application/pdf',
    });
    const name = markup.name;
    const { markupUrl } = await readMarkup(pdfOrg.workspaceKey, markup.id);
    const { context, page, violations } = await signedInAt(markupUrl, pdfOrg.workspaceId);
    try {
      await page
        .getByRole('status')
        .getByText(/Converting the PDF/)
        .waitFor();
      // How far the worker has come, as it records it, shows without a reload.
      await recordConversionProgress(markup.id, { pagesConverted: 1, pageCount: 2, percent: 50 });
      await page
        .getByRole('status')
        .getByText('Converting the PDF into pages… 50%. 1 of 2 pages done. It appears here when it is ready.')
        .waitFor({ timeout: 15_000 });
      expect(await page.getByRole('progressbar', { name: 'Conversion progress' }).getAttribute('value')).toBe('50');
      await shots(page, 'pdf-converting');
      await sendJob(clients, markup.id);
      // No reload: the screen reads the markup again until it is ready.
      await page.getByRole('img', { name: `${name}, page 2 of 2` }).waitFor({ timeout: 30_000 });
      await createThread(pdfOrg.workspaceKey, markup, {
        pageNumber: 2,
        offsetXPercentage: 50,
        offsetYPercentage: 20,
        message: undefined,
        content: 'Typo in the title',
      });
      await page.reload();
      const page2 = page.locator('figure', { has: page.getByRole('img', { name: `${name}, page 2 of 2` }) });
      await page2.getByRole('button', { name: 'Comment 1', exact: true }).waitFor();
      const page1 = page.locator('figure', { has: page.getByRole('img', { name: `${name}, page 1 of 2` }) });
      expect(await page1.getByRole('button', { name: 'Comment 1', exact: true }).count()).toBe(0);

      await page.getByRole('button', { name: 'Add comment' }).click();
      const image = page2.getByRole('img');
      await image.scrollIntoViewIfNeeded();
      const box = (await image.boundingBox())!;
      await image.click({ position: { x: box.width * 0.4, y: box.height * 0.6 } });
      const dialog = page.getByRole('dialog', { name: 'New comment' });
      await dialog.getByRole('textbox', { name: 'Comment' }).fill('Move the chart up');
      await dialog.getByRole('button', { name: 'Post' }).click();
      await page2.getByRole('button', { name: 'Comment 2', exact: true }).waitFor();
      const created = (await threadsOf(pdfOrg.workspaceKey, markup.id)).find((thread) => thread.number === 2);
      expect(created).toMatchObject({ pageNumber: 2 });
      expect(created.offsetXPercentage).toBeCloseTo(40, 0);
      expect(created.offsetYPercentage).toBeCloseTo(60, 0);
      await page.locator('.thread-list').getByText('Page 2').first().waitFor();
      await shots(page, 'pdf-board');
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a video markup: pins show during their time range; a comment at the current time carries startTime and endTime', async () => {
    const name = `Product teaser ${Math.random().toString(36).slice(2, 6)}`;
    const markup = await makeTypedMarkup(org, 'video', {
      name,
      video: {
        file: { key: `test/${markup_id()}/video.webm`, mimeType: 'video/webm', filesize: 1 },
        durationSeconds: 2,
        width: 320,
        height: 240,
        poster: { key: `test/${markup_id()}/poster.png`, mimeType: 'image/png', filesize: 1 },
      },
    });
    await putObject(
      markup.video!.file.key,
      readFileSync(new URL('../fixtures/video/testsrc-320x240-2s.webm', import.meta.url)),
      'video/webm',
    );
    await putObject(markup.video!.poster.key, await picture('Teaser', 320, 240, 20), 'image/png');
    await createThread(org.workspaceKey, markup, {
      startTime: 0,
      endTime: 0.8,
      offsetXPercentage: 30,
      offsetYPercentage: 30,
      message: undefined,
      content: 'Intro too fast',
    });
    await createThread(org.workspaceKey, markup, {
      startTime: 1.2,
      endTime: 1.9,
      offsetXPercentage: 60,
      offsetYPercentage: 70,
      message: undefined,
      content: 'Logo cut off',
    });
    const { markupUrl } = await readMarkup(org.workspaceKey, markup.id);
    const { context, page, violations } = await signedInAt(markupUrl);
    try {
      const video = page.locator(`video[aria-label^="${name}"]`);
      await video.waitFor();
      await expect
        .poll(() => video.evaluate((element) => (element as unknown as { readyState: number }).readyState), { timeout: 15_000 })
        .toBeGreaterThanOrEqual(1);
      const pin1 = page.getByRole('button', { name: 'Comment 1', exact: true });
      const pin2 = page.getByRole('button', { name: 'Comment 2', exact: true });
      await pin1.waitFor();
      expect(await pin2.count()).toBe(0);

      await video.evaluate((element) => {
        (element as unknown as { currentTime: number }).currentTime = 1.5;
      });
      await pin2.waitFor();
      await pin1.waitFor({ state: 'detached' });
      await shots(page, 'video-board');

      await page.getByRole('button', { name: 'Add comment' }).click();
      await video.click({ position: { x: 160, y: 60 } });
      const dialog = page.getByRole('dialog', { name: 'New comment' });
      await dialog.getByRole('textbox', { name: 'Comment' }).fill('Hold this frame longer');
      await dialog.getByRole('button', { name: 'Post' }).click();
      await page.getByRole('button', { name: 'Comment 3', exact: true }).waitFor();
      const created = (await threadsOf(org.workspaceKey, markup.id)).find((thread) => thread.number === 3);
      expect(created.startTime).toBeCloseTo(1.5, 1);
      expect(created.endTime).toBeGreaterThan(created.startTime);
      expect(created.endTime).toBeLessThanOrEqual(2);
      expect(created.offsetXPercentage).toBeCloseTo(50, 0);
      expect(created.offsetYPercentage).toBeCloseTo(25, 0);

      // The list seeks to a comment's time and opens it.
      await page.getByRole('button', { name: 'Open comment #1' }).click();
      await page.getByRole('dialog', { name: 'Comment 1' }).waitFor();
      await page.keyboard.press('Escape');
      await pin1.waitFor();
      expect(await pin2.count()).toBe(0);
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a webpage markup: "Rendering the page…", then each view mode\'s full-page screenshot without a reload, pins on their elements, a click comments on the element under it', async () => {
    const site = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PRICING_PAGE),
    );
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const name = `Pricing page ${markup_id()}`;
    const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/pricing`;
    // As POST /markups/url writes it, its render not yet queued: the board shows the wait first.
    const markup = await makeTypedMarkup(org, 'webpage', {
      name,
      url,
      thumbnailState: 'pending',
      pageScreenshots: pendingPageScreenshots(VIEW_MODES.map((mode) => mode.id)),
    });
    await createThread(org.workspaceKey, markup, {
      url,
      canonicalUrl: url,
      viewModeId: DESKTOP,
      elements: [{ elementPath: '#basic', offsetXPercentage: 25, offsetYPercentage: 50 }],
      message: undefined,
      content: 'Align the plan cards',
    });
    await createThread(org.workspaceKey, markup, {
      url,
      canonicalUrl: url,
      viewModeId: TABLET,
      elements: [{ elementPath: '#gone', offsetXPercentage: 10, offsetYPercentage: 10 }],
      message: undefined,
      content: 'Menu overlaps the logo',
    });
    const { markupUrl } = await readMarkup(org.workspaceKey, markup.id);
    const { context, page, violations } = await signedInAt(markupUrl);
    try {
      await page
        .getByRole('status')
        .getByText(/Rendering the page/)
        .waitFor();
      await shots(page, 'webpage-rendering');
      const { sqs, services } = conversionClients();
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: services.queues.thumbnails.url,
          MessageBody: JSON.stringify({ type: 'render-thumbnail', markupId: markup.id }),
        }),
      );
      // No reload: the screen reads the markup again until the screenshots are rendered.
      const screenshot = page.getByRole('img', { name: `${name} — Desktop` });
      await screenshot.waitFor({ timeout: 60_000 });
      await expect
        .poll(() => screenshot.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth), { timeout: 15_000 })
        .toBe(1440);

      // The API's pin sits on its element (#basic) at its offsets; the tablet's is not on the desktop screenshot.
      const layout = (await call('GET', `/markups/${markup.id}/page-screenshots/${DESKTOP}/layout`, { key: org.workspaceKey })).body.data;
      const basic = layout.located['#basic'];
      const pin1 = page.getByRole('button', { name: 'Comment 1', exact: true });
      await pin1.waitFor();
      const scale = async () => {
        const box = (await screenshot.boundingBox())!;
        return { box, factor: box.width / layout.width };
      };
      let { box, factor } = await scale();
      const pinBox = (await pin1.boundingBox())!;
      expect(Math.abs(pinBox.x + pinBox.width / 2 - (box.x + (basic.x + basic.width * 0.25) * factor))).toBeLessThan(3);
      expect(Math.abs(pinBox.y + pinBox.height / 2 - (box.y + (basic.y + basic.height * 0.5) * factor))).toBeLessThan(3);
      expect(await page.getByRole('button', { name: 'Comment 2', exact: true }).count()).toBe(0);
      await shots(page, 'webpage-board');

      // Add a comment: a click on the "Pro" card, 30 % across and 40 % down it.
      const pro = layout.elements.find((element: { path: string }) => element.path === 'html > body > main > div:nth-of-type(2)');
      expect(pro).toBeDefined();
      await page.getByRole('button', { name: 'Add comment' }).click();
      await screenshot.scrollIntoViewIfNeeded();
      ({ box, factor } = await scale());
      await screenshot.click({ position: { x: (pro.x + pro.width * 0.3) * factor, y: (pro.y + pro.height * 0.4) * factor } });
      const dialog = page.getByRole('dialog', { name: 'New comment' });
      await dialog.getByRole('textbox', { name: 'Comment' }).fill('Make Pro the highlighted plan');
      await dialog.getByRole('button', { name: 'Post' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.locator('figure', { has: screenshot }).getByRole('button', { name: 'Comment 3', exact: true }).waitFor();
      const created = (await threadsOf(org.workspaceKey, markup.id)).find((thread) => thread.number === 3);
      expect(created).toMatchObject({
        viewModeId: DESKTOP,
        canonicalUrl: url,
        elements: [{ path: 'html > body > main > div:nth-of-type(2)' }],
      });
      expect(Math.abs(created.elements[0].offsetXPercentage - 30)).toBeLessThan(1.5);
      expect(Math.abs(created.elements[0].offsetYPercentage - 40)).toBeLessThan(1.5);
      await shots(page, 'webpage-board-new-comment');

      // The tablet's comment names an element the page does not have: listed, not placed.
      await page.getByRole('tab', { name: /^Tablet/ }).click();
      await page.getByRole('img', { name: `${name} — Tablet` }).waitFor();
      const notOn = page.getByRole('group', { name: /^Not on this screenshot/ });
      await notOn.getByRole('button', { name: 'Comment 2', exact: true }).waitFor();
      expect(await page.locator('figure').getByRole('button', { name: 'Comment 2', exact: true }).count()).toBe(0);
      await shots(page, 'webpage-board-tablet');
      await page.getByRole('tab', { name: /^Mobile/ }).click();
      await page.getByRole('img', { name: `${name} — Mobile` }).waitFor();
      await shots(page, 'webpage-board-mobile');

      // From the keyboard on the mobile tab: Add comment, Enter on the screenshot places the pin on the element in the middle of the view.
      await page.getByRole('button', { name: 'Add comment' }).focus();
      await page.keyboard.press('Enter');
      await expect
        .poll(() => page.getByRole('img', { name: `${name} — Mobile` }).evaluate((element) => element.matches(':focus')))
        .toBe(true);
      await page.keyboard.press('Enter');
      const keyboardDialog = page.getByRole('dialog', { name: 'New comment' });
      await keyboardDialog.getByRole('textbox', { name: 'Comment' }).fill('Cards too tall on phones');
      await keyboardDialog.getByRole('button', { name: 'Post' }).click();
      await page.locator('figure').getByRole('button', { name: 'Comment 4', exact: true }).waitFor();
      const fromKeyboard = (await threadsOf(org.workspaceKey, markup.id)).find((thread) => thread.number === 4);
      expect(fromKeyboard.viewModeId).toBe(MOBILE);
      expect(fromKeyboard.elements[0].path).toMatch(/^html > body/);

      // Opened from the list on the mobile tab, a desktop comment is shown on the desktop screenshot, where its pin is.
      await page.getByRole('button', { name: 'Open comment #3' }).click();
      const opened = page.getByRole('dialog', { name: 'Comment 3' });
      await opened.getByText(/^Open · Desktop/).waitFor();
      await expect.poll(() => page.getByRole('tab', { name: /^Desktop/ }).getAttribute('aria-selected')).toBe('true');
      await page.keyboard.press('Escape');
      await page.locator('figure', { has: screenshot }).getByRole('button', { name: 'Comment 3', exact: true }).waitFor();
      expect(violations).toEqual([]);
    } finally {
      await context.close();
      await new Promise((resolve) => site.close(resolve));
    }
  });

  it('a reply with attachments: uploaded through the presigned flow with progress, shown in the thread, read back through the API', async () => {
    const name = `Attachments ${Math.random().toString(36).slice(2, 6)}`;
    const markup = await imageMarkup(name);
    await createThread(org.workspaceKey, markup, {
      offsetXPercentage: 30,
      offsetYPercentage: 40,
      message: undefined,
      content: 'Which colour?',
    });
    const { markupUrl } = await readMarkup(org.workspaceKey, markup.id);
    const { context, page, violations } = await signedInAt(markupUrl);
    try {
      await page.getByRole('button', { name: 'Comment 1', exact: true }).click();
      const thread = page.getByRole('dialog', { name: 'Comment 1' });
      await thread.getByText('Which colour?').waitFor();
      const shotBytes = await picture('Option B', 320, 200, 120);
      const notes = Buffer.from('Palette: #2454c5, #f0a202\n');
      // Storage's answer is held back, so the progress bars can be seen.
      const release = await holdStorageUploads(context);
      await thread.getByLabel('Attach files').setInputFiles([
        { name: 'option-b.png', mimeType: 'image/png', buffer: shotBytes },
        { name: 'palette.txt', mimeType: 'text/plain', buffer: notes },
      ]);
      await thread.getByRole('progressbar', { name: 'Uploading option-b.png' }).waitFor();
      await thread.getByRole('progressbar', { name: 'Uploading palette.txt' }).waitFor();
      expect(await thread.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
      await shots(page, 'thread-uploading');
      release();
      await thread.getByRole('button', { name: 'Remove option-b.png' }).waitFor();
      await thread.getByRole('button', { name: 'Remove palette.txt' }).waitFor();
      expect(await thread.getByRole('progressbar').count()).toBe(0);
      await thread.getByRole('textbox', { name: 'Reply' }).fill('Option B, palette attached');
      await thread.getByRole('button', { name: 'Send' }).click();

      // The message shows its picture (a link named by it) and its file as a link.
      const image = thread.getByRole('img', { name: 'Attachment option-b.png' });
      await image.waitFor();
      await thread.getByRole('link', { name: 'Attachment palette.txt' }).waitFor();
      expect(await thread.getByRole('button', { name: /^Remove / }).count()).toBe(0);
      // Loaded from storage, not refused by the CSP (img-src).
      await expect
        .poll(() => image.evaluate((element) => (element as unknown as { complete: boolean; naturalWidth: number }).naturalWidth))
        .toBe(320);
      await shots(page, 'thread-attachments');

      // Read back through the API: the reply carries both uploads, whose links return the bytes sent.
      const reply = (await threadsOf(org.workspaceKey, markup.id))[0].messages[1];
      expect(reply.content).toBe('Option B, palette attached');
      expect(
        reply.attachments.map((attachment: any) => [attachment.originalFilename, attachment.mimeType, attachment.filesize]).sort(),
      ).toEqual([
        ['option-b.png', 'image/png', shotBytes.length],
        ['palette.txt', 'text/plain', notes.length],
      ]);
      const text = reply.attachments.find((attachment: any) => attachment.originalFilename === 'palette.txt');
      expect(Buffer.from(await (await fetch(text.url)).arrayBuffer())).toEqual(notes);

      // A refused upload shows the problem's detail, and nothing is attached.
      await context.route('**/api/v2/uploads/upload-policy', (route) =>
        route.fulfill({
          status: 413,
          contentType: 'application/problem+json',
          body: JSON.stringify({
            type: 'urn:review-board:problem:storage-limit',
            title: 'Storage limit reached',
            status: 413,
            detail: "This upload would pass the plan's storage limit.",
          }),
        }),
      );
      await thread.getByLabel('Attach files').setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: shotBytes });
      await thread.getByRole('alert').getByText("This upload would pass the plan's storage limit.").waitFor();
      expect(await thread.getByRole('button', { name: 'Remove huge.png' }).count()).toBe(0);
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a read-only markup shows its comments but refuses new ones, saying why', async () => {
    const name = `Paused review ${Math.random().toString(36).slice(2, 6)}`;
    const markup = await imageMarkup(name);
    await createThread(org.workspaceKey, markup, {
      offsetXPercentage: 40,
      offsetYPercentage: 40,
      message: undefined,
      content: 'Before the pause',
    });
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const pause = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    expect(pause.status, JSON.stringify(pause.body)).toBe(200);
    const { markupUrl } = await readMarkup(org.workspaceKey, markup.id);
    const { context, page } = await signedInAt(markupUrl);
    try {
      const add = page.getByRole('button', { name: 'Add comment' });
      await add.waitFor();
      expect(await add.isDisabled()).toBe(true);
      await page
        .getByText(/Comments are paused on this markup/)
        .first()
        .waitFor();
      await page.getByRole('button', { name: 'Comment 1', exact: true }).click();
      const thread = page.getByRole('dialog', { name: 'Comment 1' });
      await thread.getByText('Before the pause').waitFor();
      expect(await thread.getByRole('textbox', { name: 'Reply' }).count()).toBe(0);
      await thread.getByText(/Comments are paused/).waitFor();
      await shots(page, 'read-only-board');
    } finally {
      await context.close();
    }
  });

  it('a viewer sees the comments but no "Add comment" and no reply box, each saying why', async () => {
    const name = `Viewer review ${Math.random().toString(36).slice(2, 6)}`;
    const markup = await imageMarkup(name);
    await createThread(org.workspaceKey, markup, {
      offsetXPercentage: 30,
      offsetYPercentage: 30,
      message: undefined,
      content: 'For everyone to read',
    });
    const { markupUrl } = await readMarkup(org.workspaceKey, markup.id);
    const { context, page } = await signedInAt(markupUrl, org.workspaceId, 1440, 'viewer');
    try {
      await page.getByText('Your role in this workspace can read comments but not add them.').first().waitFor();
      expect(await page.getByRole('button', { name: 'Add comment' }).count()).toBe(0);
      await page.getByRole('button', { name: 'Comment 1', exact: true }).click();
      const thread = page.getByRole('dialog', { name: 'Comment 1' });
      await thread.getByText('For everyone to read').waitFor();
      expect(await thread.getByRole('textbox', { name: 'Reply' }).count()).toBe(0);
      expect(await thread.getByRole('button', { name: 'Delete thread' }).count()).toBe(0);
      await shots(page, 'viewer-board');
    } finally {
      await context.close();
    }
  });
});

const markup_id = () => Math.random().toString(36).slice(2, 10);

/** The page the webpage test's markup shows: a header, three plan cards side by side (stacked when narrow), a footer. */
const PRICING_PAGE = `<!doctype html><html><head><meta name="viewport" content="width=device-width"><title>Pricing</title><style>
body { margin: 0; font: 18px/1.4 sans-serif; color: #1c2430 } header { padding: 24px 32px; background: #173a8c; color: #fff; font-size: 28px }
main { display: flex; flex-wrap: wrap; gap: 24px; padding: 32px } main > div { flex: 1 1 220px; height: 320px; border-radius: 12px; padding: 24px; box-sizing: border-box }
#basic { background: #e3ecff } main > div:nth-of-type(2) { background: #ffe9cc } main > div:nth-of-type(3) { background: #dff5e1 }
footer { height: 500px; background: #eef0f3; padding: 32px }
</style></head><body><header>Acme pricing</header><main><div id="basic">Basic · 9 €</div><div>Pro · 29 €</div><div>Enterprise · ask us</div></main><footer>Questions? Write to us.</footer></body></html>`;
