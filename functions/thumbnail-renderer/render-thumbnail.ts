import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import * as v from 'valibot';
import { getS3 } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import {
  pendingViewModes,
  recordRenderUnavailable,
  recordThumbnailReady,
  startThumbnailWork,
  thumbnailObjectKey,
  webpageMarkupToRender,
} from '../../shared/domain/markups/renders.js';
import { enqueueThumbnail } from '../../shared/events/jobs.js';
import { defineJob } from '../../shared/events/queue-worker.js';
import { logger } from '../../shared/logger.js';
import { findChromium, RenderError, renderThumbnail } from '../../shared/render/chromium.js';
import type { NetworkGuard } from '../../shared/render/guarded-proxy.js';
import { addressPolicy, pinAddress, UnsafeUrlError } from '../../shared/render/url-safety.js';
import { QUEUES } from '../../shared/queues.js';

const MAX_REDIRECTS = 5;

/**
 * Renders a webpage markup's thumbnail. Outcomes the page decides (unreachable, error status,
 * refused address, no renderer on this stack) end as `unavailable` with the reason: the markup shows
 * the placeholder and nothing retries. Only infrastructure failures throw, and the last delivery
 * before the dead-letter queue records `unavailable` first, so no markup stays `pending` forever.
 * A markup deleted while its thumbnail was rendered keeps no thumbnail: the run that finds it gone
 * after storing, or a later delivery that finds no record, empties the markup's prefix.
 *
 * Once the thumbnail is stored the job queues one `render-page-screenshot` per view mode still
 * pending (the full-page screenshots of the board), before it records the thumbnail: a run that
 * dies in between is delivered again and queues them again (a second render of a settled mode
 * does nothing). A page that cannot be rendered settles its view modes unavailable with the
 * thumbnail's reason.
 */
export const renderThumbnailJob = defineJob({
  schema: v.object({ type: v.literal('render-thumbnail'), markupId: v.pipe(v.string(), v.uuid()) }),
  run: async (job, record) => {
    // A deleted markup loses here what an earlier run stored and died before recording.
    const markup = await webpageMarkupToRender(job.markupId);
    if (!markup || markup.thumbnailState === 'ready') return;
    await startThumbnailWork(markup);
    try {
      const outcome = await render(markup.url);
      const pendingModes = pendingViewModes(markup);
      if (outcome.state === 'unavailable') {
        await recordRenderUnavailable(markup.id, pendingModes, { pages: outcome.error, thumbnail: outcome.error });
        logger.info('thumbnail unavailable', { markupId: markup.id, reason: outcome.error });
        return;
      }
      const key = thumbnailObjectKey(markup.id);
      await getS3().send(
        new PutObjectCommand({
          Bucket: getConfig().bucketName,
          Key: key,
          Body: outcome.png,
          ContentType: 'image/png',
          CacheControl: 'max-age=86400',
        }),
      );
      for (const viewModeId of pendingModes) await enqueueThumbnail({ type: 'render-page-screenshot', markupId: markup.id, viewModeId });
      await recordThumbnailReady(markup.id, key);
    } catch (error) {
      const lastAttempt = Number(record.attributes.ApproximateReceiveCount) >= QUEUES.thumbnails.maxReceiveCount;
      if (lastAttempt) {
        await recordRenderUnavailable(markup.id, pendingViewModes(markup), {
          pages: 'The page could not be rendered.',
          thumbnail: 'The thumbnail could not be stored.',
        });
      }
      throw error;
    }
  },
});

type Outcome = { state: 'ready'; png: Buffer } | { state: 'unavailable'; error: string };

async function render(url: string): Promise<Outcome> {
  const config = getConfig();
  const chromium = await findChromium(config);
  if (!chromium) return { state: 'unavailable', error: 'No page renderer (Chromium) is installed on this stack.' };
  const guard: NetworkGuard = { allowed: addressPolicy(config.mode) };
  try {
    const final = await reachableUrl(url, guard);
    return { state: 'ready', png: await renderThumbnail(chromium, final, { guard }) };
  } catch (error) {
    if (error instanceof UnsafeUrlError || error instanceof RenderError || error instanceof PageError)
      return { state: 'unavailable', error: error.message };
    throw error;
  }
}

export class PageError extends Error {}

/**
 * Follows redirects by hand and fails fast on pages that cannot be loaded instead of screenshotting
 * an error page. Every hop connects to the one address `pinAddress` checked (the local stack allows
 * loopback, a deployed one public addresses only), so neither a redirect nor a second DNS answer
 * can point this probe into the stack's own network.
 */
export async function reachableUrl(start: string, guard: NetworkGuard): Promise<string> {
  let current = start;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    const url = new URL(current);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new UnsafeUrlError(`Only http and https URLs can be rendered (got ${url.protocol}).`);
    const address = await pinAddress(url.hostname, guard.allowed, guard.resolve);
    const { status, location } = await probe(url, address);
    if (status >= 300 && status < 400 && location) {
      current = new URL(location, current).href;
      continue;
    }
    if (status >= 400) throw new PageError(`The page answered HTTP ${status}.`);
    return current;
  }
  throw new PageError(`The page redirected more than ${MAX_REDIRECTS} times.`);
}

/** One GET of `url` from exactly `address`, reading only the status and the redirect target. */
function probe(url: URL, address: string): Promise<{ status: number; location: string | undefined }> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const name = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: address,
        port: url.port || (url.protocol === 'https:' ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers: { host: url.host, 'user-agent': 'ReviewBoardRenderer/1.0' },
        ...(isIP(name) ? {} : { servername: name }),
        timeout: 10_000,
      },
      (response) => {
        resolve({ status: response.statusCode ?? 502, location: response.headers.location });
        response.destroy();
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('no answer within 10 s')));
    outgoing.on('error', (error) => reject(new PageError(`The page could not be loaded: ${error.message}`)));
    outgoing.end();
  });
}
