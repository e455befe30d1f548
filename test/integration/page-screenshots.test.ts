import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPageScreenshotJob } from '../../functions/thumbnail-renderer/render-page-screenshot.js';
import { renderThumbnailJob } from '../../functions/thumbnail-renderer/render-thumbnail.js';
import { getS3 } from '../../shared/clients.js';
import { resetConfig } from '../../shared/config.js';
import { getItem, type MarkupRecord } from '../../shared/db/items.js';
import { pendingPageScreenshots } from '../../shared/db/page-screenshots.js';
import { VIEW_MODES } from '../../shared/domain/markups/view-modes.js';
import { findChromium } from '../../shared/render/chromium.js';
import { MAX_SCREENSHOT_HEIGHT, renderPage } from '../../shared/render/page-screenshot.js';
import { addressPolicy } from '../../shared/render/url-safety.js';
import { markupObjectPrefix } from '../../shared/storage/objects.js';
import { call, makeOrganization } from '../support/api.js';
import { conversionClients, deliveryRecord as record, keysUnder as keysIn } from '../support/conversion-jobs.js';
import { makeMarkup, workspaceOf } from '../support/items.js';
import { eventually } from '../support/polling.js';
import { createThread, DESKTOP, MOBILE } from '../support/threads.js';

const clients = conversionClients();
const { services, sqs, s3 } = clients;
const keysUnder = (prefix: string) => keysIn(clients, prefix);

/**
 * As thumbnails.test.ts: the worker's own lookup decides, so a stack without Chromium skips the renders (and checks the reason instead).
 */
const renderable = (await findChromium({ chromiumPath: process.env.CHROMIUM_PATH })) !== undefined || process.env.CI === 'true';
if (!renderable)
  console.warn('page screenshots: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the rendering tests are skipped');

/** A page taller than every view mode, with an element threads name by id, one by class that comes late, and one too deep to reach. */
const PAGE = `<!doctype html><html><head><meta name="viewport" content="width=device-width"><style>
body { margin: 0; font: 16px sans-serif } header { height: 100px; background: #036; color: #fff }
section { height: 700px; border-bottom: 4px solid #888 } #hero { height: 300px; background: #c00 } .late { margin: 40px; height: 80px; background: #0a0 }
.deep { position: absolute; top: ${MAX_SCREENSHOT_HEIGHT + 500}px; height: 50px; width: 50px }
</style></head><body><header>Top</header><main><section><div id="hero">Hero</div></section><section><p class="late">Late</p></section><section>Third</section></main><div class="deep">Deep</div></body></html>`;

let site: Server;
let siteUrl: string;

beforeAll(async () => {
  site = createServer((request, response) => {
    if (request.url === '/missing') {
      response.writeHead(404).end('gone');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => site.close(resolve));
  sqs.destroy();
  s3.destroy();
});

/** A webpage markup waiting for its thumbnail and its page screenshots, as POST /markups/url writes it. */
async function pendingWebpage(org: { workspaceId: string }, url: string): Promise<MarkupRecord> {
  const workspace = await workspaceOf(org.workspaceId);
  return makeMarkup({
    workspaceId: org.workspaceId,
    organizationId: workspace.organizationId,
    parentFolderId: workspace.rootFolderId,
    url,
    thumbnailState: 'pending',
    pageScreenshots: pendingPageScreenshots(VIEW_MODES.map((mode) => mode.id)),
  });
}

type Screenshot = { viewModeId: string; state: string; url?: string; width?: number; height?: number; layoutUrl?: string; error?: string };

async function screenshotsOf(key: string, markupId: string): Promise<Screenshot[]> {
  const response = await call('GET', `/markups/${markupId}`, { key });
  expect(response.status).toBe(200);
  return response.body.data.pageScreenshots as Screenshot[];
}

/** Queues the markup's thumbnail job (as POST /markups/url does) and waits until no view mode is pending. */
async function renderAll(key: string, markupId: string): Promise<Screenshot[]> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: services.queues.thumbnails.url,
      MessageBody: JSON.stringify({ type: 'render-thumbnail', markupId }),
    }),
  );
  return eventually(
    () => screenshotsOf(key, markupId),
    (shots) => shots.every((shot) => shot.state !== 'pending'),
    90_000,
  );
}

function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = Buffer.from(bytes);
  expect(view.subarray(1, 4).toString()).toBe('PNG');
  return { width: view.readUInt32BE(16), height: view.readUInt32BE(20) };
}

const layoutPath = (markupId: string, viewModeId: string) => `/markups/${markupId}/page-screenshots/${viewModeId}/layout`;

describe('full-page screenshots of webpage markups, per view mode (thumbnails queue)', () => {
  it.runIf(renderable)(
    "renders each view mode at its width into a full-page PNG with the layout of its elements and of the threads' selectors",
    async () => {
      const org = await makeOrganization();
      const markup = await pendingWebpage(org, `${siteUrl}/`);
      await createThread(org.workspaceKey, markup, { elements: [{ elementPath: '#hero', offsetXPercentage: 10, offsetYPercentage: 20 }] });
      await createThread(org.workspaceKey, markup, {
        elements: [{ elementPath: '.nowhere', offsetXPercentage: 10, offsetYPercentage: 20 }],
      });

      const shots = await renderAll(org.workspaceKey, markup.id);

      expect(shots.map((shot) => [shot.viewModeId, shot.state])).toEqual(VIEW_MODES.map((mode) => [mode.id, 'ready']));
      for (const mode of VIEW_MODES) {
        const shot = shots.find((candidate) => candidate.viewModeId === mode.id)!;
        const image = await fetch(shot.url!);
        const size = pngSize(new Uint8Array(await image.arrayBuffer()));
        // Four sections and the header: taller than any viewport, cut at the cap by the deep element.
        expect(size).toEqual({ width: mode.width, height: shot.height });
        expect(shot.width).toBe(mode.width);
        expect(shot.height).toBe(MAX_SCREENSHOT_HEIGHT);
        expect(shot.layoutUrl).toMatch(new RegExp(`/api/v2${layoutPath(markup.id, mode.id)}$`));
      }
      const layout = (await call('GET', layoutPath(markup.id, DESKTOP), { key: org.workspaceKey })).body.data;
      const hero = layout.elements.find(
        (element: { path: string }) => element.path === 'html > body > main > section:nth-of-type(1) > div',
      );
      expect(hero).toEqual({ path: 'html > body > main > section:nth-of-type(1) > div', x: 0, y: 100, width: 1440, height: 300 });
      expect(layout.elements.some((element: { path: string }) => element.path === 'html > body > div')).toBe(false);
      expect(layout.located).toEqual({ '#hero': { x: 0, y: 100, width: 1440, height: 300 }, '.nowhere': null });
      // Threads of another view mode are not located in this one.
      const mobile = (await call('GET', layoutPath(markup.id, MOBILE), { key: org.workspaceKey })).body.data;
      expect(mobile.located).toEqual({});
      expect(
        mobile.elements.find((element: { path: string }) => element.path === 'html > body > main > section:nth-of-type(2) > p'),
      ).toEqual({
        path: 'html > body > main > section:nth-of-type(2) > p',
        x: 40,
        y: 100 + 704 + 40,
        width: 375 - 80,
        height: 80,
      });
    },
    120_000,
  );

  it.runIf(renderable)(
    'locates the selector of a thread created after the render (locate-page-elements), and only that one',
    async () => {
      const org = await makeOrganization();
      const markup = await pendingWebpage(org, `${siteUrl}/`);
      await renderAll(org.workspaceKey, markup.id);
      const before = (await call('GET', layoutPath(markup.id, DESKTOP), { key: org.workspaceKey })).body.data;

      const thread = await createThread(org.workspaceKey, markup, {
        elements: [{ elementPath: 'p.late', offsetXPercentage: 50, offsetYPercentage: 50 }],
      });
      const after = await eventually(
        async () => (await call('GET', layoutPath(markup.id, DESKTOP), { key: org.workspaceKey })).body.data,
        (layout) => 'p.late' in layout.located,
        60_000,
      );
      // A pin moved to another element is located the same way.
      const moved = await call('PATCH', `/threads/${thread.id}/move-pin`, {
        key: org.workspaceKey,
        body: { url: markup.url, elements: [{ elementPath: 'main > section:last-child', offsetXPercentage: 5, offsetYPercentage: 5 }] },
      });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      const afterMove = await eventually(
        async () => (await call('GET', layoutPath(markup.id, DESKTOP), { key: org.workspaceKey })).body.data,
        (layout) => 'main > section:last-child' in layout.located,
        60_000,
      );

      expect(before.located).toEqual({});
      expect(after.located).toEqual({ 'p.late': { x: 40, y: 100 + 704 + 40, width: 1440 - 80, height: 80 } });
      expect(after.elements).toEqual(before.elements);
      expect(afterMove.located['main > section:last-child']).toEqual({ x: 0, y: 100 + 704 + 40 + 704, width: 1440, height: 704 });
    },
    120_000,
  );

  it.runIf(renderable)(
    'a run that dies between its objects leaves the view mode pending, and its redelivery settles it once; duplicates change nothing',
    async () => {
      const org = await makeOrganization();
      const markup = await pendingWebpage(org, `${siteUrl}/`);
      const job = { type: 'render-page-screenshot' as const, markupId: markup.id, viewModeId: MOBILE };
      const hook = `die-after-png-${randomUUID()}`;
      getS3().middlewareStack.add(
        (next) => async (args) => {
          const key = (args.input as { Key?: string }).Key ?? '';
          if (key.startsWith(markupObjectPrefix(markup.id)) && key.endsWith('.layout.json'))
            throw new Error('killed between the PNG and the layout');
          return next(args);
        },
        { step: 'initialize', name: hook },
      );
      try {
        await expect(renderPageScreenshotJob.run(job, record(1))).rejects.toThrow(/killed/);
      } finally {
        getS3().middlewareStack.remove(hook);
      }
      const died = (await getItem(markup.id, true)) as MarkupRecord;
      expect(died.pageScreenshots?.[MOBILE]).toEqual({ state: 'pending' });

      await Promise.all([renderPageScreenshotJob.run(job, record(2)), renderPageScreenshotJob.run(job, record(2))]);
      const settled = (await getItem(markup.id, true)) as MarkupRecord;
      await renderPageScreenshotJob.run(job, record(3));
      const again = (await getItem(markup.id, true)) as MarkupRecord;

      expect(settled.pageScreenshots?.[MOBILE]).toMatchObject({ state: 'ready', width: 375 });
      // One settling write: the version moved once whichever of the two duplicates won.
      expect(settled.version).toBe((died.version ?? 0) + 1);
      expect(again).toEqual(settled);
      expect(await keysUnder(markupObjectPrefix(markup.id))).toEqual([
        `${markupObjectPrefix(markup.id)}pages/${MOBILE}.layout.json`,
        `${markupObjectPrefix(markup.id)}pages/${MOBILE}.png`,
      ]);
    },
    120_000,
  );

  it.runIf(renderable)(
    'deleting the markup removes its screenshots and layouts, and a render that comes after the deletion leaves nothing',
    async () => {
      const org = await makeOrganization();
      const markup = await pendingWebpage(org, `${siteUrl}/`);
      await renderAll(org.workspaceKey, markup.id);
      expect((await keysUnder(markupObjectPrefix(markup.id))).filter((key) => key.includes('/pages/'))).toHaveLength(2 * VIEW_MODES.length);

      expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(204);
      const left = await eventually(
        () => keysUnder(markupObjectPrefix(markup.id)),
        (keys) => keys.length === 0,
        30_000,
      );
      await renderPageScreenshotJob.run({ type: 'render-page-screenshot', markupId: markup.id, viewModeId: DESKTOP }, record(1));

      expect(left).toEqual([]);
      expect(await keysUnder(markupObjectPrefix(markup.id))).toEqual([]);
    },
    120_000,
  );

  it.runIf(renderable)(
    'a page that cannot be rendered settles every view mode unavailable with the reason; the layout answers 404',
    async () => {
      const org = await makeOrganization();
      const markup = await pendingWebpage(org, `${siteUrl}/missing`);

      const shots = await renderAll(org.workspaceKey, markup.id);
      const layout = await call('GET', layoutPath(markup.id, DESKTOP), { key: org.workspaceKey });

      expect(shots).toEqual(
        VIEW_MODES.map((mode) => ({ viewModeId: mode.id, state: 'unavailable', error: 'The page answered HTTP 404.' })),
      );
      expect(layout.status).toBe(404);
    },
    60_000,
  );

  it('says why on a stack without Chromium, never staying pending', async () => {
    const org = await makeOrganization();
    const markup = await pendingWebpage(org, `${siteUrl}/`);
    process.env.CHROMIUM_PATH = '/nonexistent/chromium';
    resetConfig();
    try {
      await renderThumbnailJob.run({ type: 'render-thumbnail', markupId: markup.id }, record(1));
      await renderPageScreenshotJob.run({ type: 'render-page-screenshot', markupId: markup.id, viewModeId: DESKTOP }, record(1));
    } finally {
      delete process.env.CHROMIUM_PATH;
      resetConfig();
    }

    const shots = await screenshotsOf(org.workspaceKey, markup.id);

    expect(shots).toEqual(
      VIEW_MODES.map((mode) => ({
        viewModeId: mode.id,
        state: 'unavailable',
        error: 'No page renderer (Chromium) is installed on this stack.',
      })),
    );
  });

  it('answers the layout only to callers who may read the markup, and a clear 4xx for other view modes and markups', async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();
    const markup = await pendingWebpage(org, `${siteUrl}/`);

    const stranger = await call('GET', layoutPath(markup.id, DESKTOP), { key: other.workspaceKey });
    const strangerRead = await call('GET', `/markups/${markup.id}`, { key: other.workspaceKey });
    const pending = await call('GET', layoutPath(markup.id, DESKTOP), { key: org.workspaceKey });
    const unknownMode = await call('GET', layoutPath(markup.id, randomUUID()), { key: org.workspaceKey });
    const malformed = await call('GET', layoutPath(markup.id, 'desktop'), { key: org.workspaceKey });
    const anonymous = await call('GET', layoutPath(markup.id, DESKTOP));

    // Refused as the markup's own read refuses it (the one permission table).
    expect(stranger.status).toBe(strangerRead.status);
    expect(stranger.status).toBe(403);
    expect(pending.status).toBe(404);
    expect(unknownMode.status).toBe(404);
    expect(malformed.status).toBe(400);
    expect(anonymous.status).toBe(401);
  });

  it.runIf(renderable)(
    'a render cut short while the page is still loading fails with its reason and leaves no unhandled rejection behind (20 runs)',
    async () => {
      const chromium = (await findChromium({ chromiumPath: process.env.CHROMIUM_PATH }))!;
      // A page that never answers: Page.navigate is still waiting when the time limit kills Chromium.
      const hanging = createServer(() => undefined);
      await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
      const unhandled: unknown[] = [];
      const record = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', record);
      try {
        for (let run = 0; run < 20; run += 1) {
          const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/slow`;
          await expect(
            renderPage(chromium, url, {
              guard: { allowed: addressPolicy('local') },
              viewport: { width: 800, height: 600 },
              timeoutMs: 1500,
            }),
          ).rejects.toThrow(/longer than|exited/);
        }
        // Rejections nobody handled are reported after the microtasks of their turn: give them one.
        await new Promise((resolve) => setImmediate(resolve));
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', record);
        hanging.closeAllConnections();
        hanging.close();
      }
    },
    120_000,
  );
});
