import { PutObjectCommand } from '@aws-sdk/client-s3';
import * as v from 'valibot';
import { getS3 } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getItem } from '../../shared/db/items.js';
import { setThumbnail, thumbnailObjectKey } from '../../shared/db/thumbnails.js';
import { defineJob } from '../../shared/events/queue-worker.js';
import { logger } from '../../shared/logger.js';
import { findChromium, RenderError, renderThumbnail } from '../../shared/render/chromium.js';
import { assertPublicUrl, UnsafeUrlError } from '../../shared/render/url-safety.js';
import { QUEUES } from '../../shared/queues.js';

const MAX_REDIRECTS = 5;

/**
 * Renders a webpage markup's thumbnail. Outcomes the page decides (unreachable, error status,
 * refused address, no renderer on this stack) end as `unavailable` with the reason: the markup shows
 * the placeholder and nothing retries. Only infrastructure failures throw, and the last delivery
 * before the dead-letter queue records `unavailable` first, so no markup stays `pending` forever.
 */
export const renderThumbnailJob = defineJob({
  schema: v.object({ type: v.literal('render-thumbnail'), markupId: v.pipe(v.string(), v.uuid()) }),
  run: async (job, record) => {
    const markup = await getItem(job.markupId, true);
    if (!markup || markup.kind !== 'markup' || markup.type !== 'webpage' || !markup.url) return;
    if (markup.thumbnailState === 'ready') return;
    try {
      const outcome = await render(markup.url);
      if (outcome.state === 'unavailable') {
        await setThumbnail(markup.id, outcome);
        logger.info('thumbnail unavailable', { markupId: markup.id, reason: outcome.error });
        return;
      }
      const key = thumbnailObjectKey(markup.id);
      await getS3().send(
        new PutObjectCommand({ Bucket: getConfig().bucketName, Key: key, Body: outcome.png, ContentType: 'image/png', CacheControl: 'max-age=86400' }),
      );
      await setThumbnail(markup.id, { state: 'ready', key });
    } catch (error) {
      const lastAttempt = Number(record.attributes.ApproximateReceiveCount) >= QUEUES.thumbnails.maxReceiveCount;
      if (lastAttempt) await setThumbnail(markup.id, { state: 'unavailable', error: 'The thumbnail could not be stored.' });
      throw error;
    }
  },
});

type Outcome = { state: 'ready'; png: Buffer } | { state: 'unavailable'; error: string };

async function render(url: string): Promise<Outcome> {
  const config = getConfig();
  const chromium = await findChromium(config);
  if (!chromium) return { state: 'unavailable', error: 'No page renderer (Chromium) is installed on this stack.' };
  try {
    const final = await reachableUrl(url, config.mode === 'aws');
    return { state: 'ready', png: await renderThumbnail(chromium, final) };
  } catch (error) {
    if (error instanceof UnsafeUrlError || error instanceof RenderError || error instanceof PageError) return { state: 'unavailable', error: error.message };
    throw error;
  }
}

class PageError extends Error {}

/**
 * Follows redirects by hand, checking every hop against private addresses on a deployed stack (a
 * public page must not redirect the renderer into the stack's own network), and fails fast on pages
 * that cannot be loaded instead of screenshotting an error page.
 */
async function reachableUrl(start: string, guard: boolean): Promise<string> {
  let current = start;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    if (guard) await assertPublicUrl(current);
    let response: Response;
    try {
      response = await fetch(current, { redirect: 'manual', signal: AbortSignal.timeout(10_000), headers: { 'user-agent': 'ReviewBoardRenderer/1.0' } });
    } catch (error) {
      throw new PageError(`The page could not be loaded: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`);
    }
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      current = new URL(location, current).href;
      continue;
    }
    if (response.status >= 400) throw new PageError(`The page answered HTTP ${response.status}.`);
    return current;
  }
  throw new PageError(`The page redirected more than ${MAX_REDIRECTS} times.`);
}
