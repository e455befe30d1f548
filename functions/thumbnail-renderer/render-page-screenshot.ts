import * as v from 'valibot';
import { getConfig } from '../../shared/config.js';
import { deleteObjectsOfDeletedMarkup } from '../../shared/domain/markups/objects.js';
import {
  pageLayoutObjectKey,
  pageScreenshotObjectKey,
  readPageLayout,
  recordPageScreenshot,
  threadPathsOf,
  webpageMarkupToRender,
} from '../../shared/domain/markups/renders.js';
import { VIEW_MODES, type ViewMode } from '../../shared/domain/markups/view-modes.js';
import { enqueueThumbnail } from '../../shared/events/jobs.js';
import { defineJob } from '../../shared/events/queue-worker.js';
import { logger } from '../../shared/logger.js';
import { findChromium, RenderError } from '../../shared/render/chromium.js';
import type { NetworkGuard } from '../../shared/render/guarded-proxy.js';
import { MAX_LOCATED_PATHS, renderPage, type PageRender } from '../../shared/render/page-screenshot.js';
import { addressPolicy, UnsafeUrlError } from '../../shared/render/url-safety.js';
import { QUEUES } from '../../shared/queues.js';
import { putObject } from '../../shared/storage/objects.js';
import { PageError, reachableUrl } from './render-thumbnail.js';

const Job = { markupId: v.pipe(v.string(), v.uuid()), viewModeId: v.string() };

/**
 * One view mode's full-page screenshot of a webpage markup (at most MAX_SCREENSHOT_HEIGHT tall)
 * and its layout: the boxes of the page's visible elements by canonical CSS path, and of the
 * selectors (`elements[].path`) of the markup's threads in that view mode at the time. The same
 * guarded network path as the thumbnail (reachableUrl, then Chromium behind the guarded proxy).
 * Both objects go under the markup's prefix before the record says `ready`, so a run that dies
 * leaves the mode pending for its next delivery, never a record naming missing objects; the record
 * changes only from pending, so redeliveries and duplicates settle it once. Outcomes the page
 * decides end as `unavailable` with the reason; the last delivery of an infrastructure failure
 * records `unavailable` before the message goes to the dead-letter queue.
 */
export const renderPageScreenshotJob = defineJob({
  schema: v.object({ type: v.literal('render-page-screenshot'), ...Job }),
  run: async (job, record) => {
    const found = await webpageMarkupToRender(job.markupId);
    const mode = VIEW_MODES.find((candidate) => candidate.id === job.viewModeId);
    if (!found || !mode || found.pageScreenshots?.[mode.id]?.state !== 'pending') return;
    const markup = found;
    try {
      const paths = await threadPathsOf(markup.id, mode.id);
      const outcome = await render(markup.url, mode, paths, true);
      if ('error' in outcome) {
        await recordPageScreenshot(markup.id, mode.id, { state: 'unavailable', error: outcome.error });
        logger.info('page screenshot unavailable', { markupId: markup.id, viewModeId: mode.id, reason: outcome.error });
        return;
      }
      const key = pageScreenshotObjectKey(markup.id, mode.id);
      const layoutKey = pageLayoutObjectKey(markup.id, mode.id);
      await putObject(key, outcome.png, 'image/png');
      await putObject(layoutKey, Buffer.from(JSON.stringify(outcome.layout)), 'application/json');
      // Deleted meanwhile: the deletion may have emptied the prefix before these writes, so they go now (`recordPageScreenshot`).
      const settled = await recordPageScreenshot(markup.id, mode.id, {
        state: 'ready',
        key,
        layoutKey,
        width: outcome.width,
        height: outcome.height,
        renderedAt: Date.now(),
      });
      if (!settled) return;
      // Threads made while the page rendered saw it pending and queued no location of their own.
      const later = (await threadPathsOf(markup.id, mode.id)).filter((path) => !paths.includes(path));
      if (later.length > 0) await enqueueThumbnail({ type: 'locate-page-elements', markupId: markup.id, viewModeId: mode.id });
    } catch (error) {
      if (Number(record.attributes.ApproximateReceiveCount) >= QUEUES.thumbnails.maxReceiveCount) {
        await recordPageScreenshot(markup.id, mode.id, { state: 'unavailable', error: 'The page screenshot could not be stored.' });
      }
      throw error;
    }
  },
});

/**
 * Adds to a ready view mode's layout the boxes of thread selectors it does not know yet (threads
 * created after the render, through the API, naming elements by selectors of their own). Bounded:
 * a run with nothing new to locate reads one object and stops; otherwise it loads the page once
 * (no screenshot) for at most MAX_LOCATED_PATHS new selectors, and records each as found (its box)
 * or not (null), so no selector is looked for twice. The layout object is replaced whole.
 */
export const locatePageElementsJob = defineJob({
  schema: v.object({ type: v.literal('locate-page-elements'), ...Job }),
  run: async (job) => {
    const markup = await webpageMarkupToRender(job.markupId);
    const mode = VIEW_MODES.find((candidate) => candidate.id === job.viewModeId);
    const screenshot = markup?.pageScreenshots?.[job.viewModeId];
    if (!markup || !mode || screenshot?.state !== 'ready') return;
    const layout = await readPageLayout(screenshot.layoutKey);
    if (!layout) return;
    const known = new Set([...layout.elements.map((element) => element.path), ...Object.keys(layout.located)]);
    const missing = (await threadPathsOf(markup.id, mode.id)).filter((path) => !known.has(path)).slice(0, MAX_LOCATED_PATHS);
    if (missing.length === 0) return;
    const outcome = await render(markup.url, mode, missing, false);
    const located = 'error' in outcome ? Object.fromEntries(missing.map((path) => [path, null])) : outcome.layout.located;
    const latest = (await readPageLayout(screenshot.layoutKey)) ?? layout;
    await putObject(
      screenshot.layoutKey,
      Buffer.from(JSON.stringify({ ...latest, located: { ...latest.located, ...located } })),
      'application/json',
    );
    // Deleted meanwhile: what this run wrote goes too.
    await deleteObjectsOfDeletedMarkup(markup.id);
  },
});

async function render(url: string, mode: ViewMode, paths: readonly string[], screenshot: boolean): Promise<PageRender | { error: string }> {
  const config = getConfig();
  const chromium = await findChromium(config);
  if (!chromium) return { error: 'No page renderer (Chromium) is installed on this stack.' };
  const guard: NetworkGuard = { allowed: addressPolicy(config.mode) };
  try {
    const final = await reachableUrl(url, guard);
    return await renderPage(chromium, final, { guard, viewport: { width: mode.width, height: mode.height }, paths, screenshot });
  } catch (error) {
    if (error instanceof UnsafeUrlError || error instanceof RenderError || error instanceof PageError) return { error: error.message };
    throw error;
  }
}
