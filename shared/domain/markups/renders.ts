import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { Principal } from '../../auth/principal.js';
import { getS3 } from '../../clients.js';
import { getConfig } from '../../config.js';
import { getItem, type MarkupRecord } from '../../db/items.js';
import {
  pageLayoutObjectKey,
  pageScreenshotObjectKey,
  readPageLayout,
  settlePageScreenshot,
  settlePendingPageScreenshots,
} from '../../db/page-screenshots.js';
import { markWorkStarted } from '../../db/pending-work.js';
import { getConversation } from '../../db/threads.js';
import { setThumbnail, thumbnailObjectKey } from '../../db/thumbnails.js';
import { NotFoundError } from '../../errors.js';
import type { PageLayout } from '../../render/page-screenshot.js';
import { deleteObjectsOfDeletedMarkup, markupOfJob } from './objects.js';
import { loadMarkup } from './access.js';

/**
 * What the renderer of webpage markups (thumbnail-renderer) records: the thumbnail and the
 * full-page screenshots per view mode, with their layouts, and what `GET /markups/{id}/thumbnail`
 * and `GET /markups/{id}/pages/{viewModeId}/layout` answer from them.
 */

export { pageLayoutObjectKey, pageScreenshotObjectKey, readPageLayout, thumbnailObjectKey };

/** The webpage markup a render job names (undefined for anything else; a deleted one's objects removed, `markupOfJob`). */
export async function webpageMarkupToRender(markupId: string): Promise<(MarkupRecord & { url: string }) | undefined> {
  const markup = await markupOfJob(markupId);
  return markup?.type === 'webpage' && markup.url ? (markup as MarkupRecord & { url: string }) : undefined;
}

/** View modes whose full-page screenshot is still to be made (none on markups from before they existed). */
export const pendingViewModes = (markup: MarkupRecord): string[] =>
  Object.entries(markup.pageScreenshots ?? {}).flatMap(([id, screenshot]) => (screenshot.state === 'pending' ? [id] : []));

/** From here the job's deliveries own the thumbnail: the pending-work sweep no longer queues it. */
export async function startThumbnailWork(markup: MarkupRecord): Promise<void> {
  if (markup.thumbnailState === 'pending') await markWorkStarted(markup.id, Date.now());
}

/** A page that cannot be rendered: its pending view modes and its thumbnail settle unavailable, each with its reason. */
export async function recordRenderUnavailable(
  markupId: string,
  pendingModes: readonly string[],
  reasons: { pages: string; thumbnail: string },
): Promise<void> {
  await settlePendingPageScreenshots(markupId, pendingModes, reasons.pages);
  await setThumbnail(markupId, { state: 'unavailable', error: reasons.thumbnail });
}

/** Records the stored thumbnail; a markup deleted meanwhile may have lost its prefix before the object was written, so it goes now. */
export async function recordThumbnailReady(markupId: string, key: string): Promise<void> {
  if (!(await setThumbnail(markupId, { state: 'ready', key }))) await deleteObjectsOfDeletedMarkup(markupId);
}

/**
 * Settles one view mode's page screenshot (only from pending, so redeliveries settle it once);
 * false when the markup is gone, after removing what the run wrote under its prefix.
 */
export async function recordPageScreenshot(
  markupId: string,
  viewModeId: string,
  outcome: Parameters<typeof settlePageScreenshot>[2],
): Promise<boolean> {
  if (await settlePageScreenshot(markupId, viewModeId, outcome)) return true;
  if (outcome.state === 'ready') await deleteObjectsOfDeletedMarkup(markupId);
  return false;
}

/** The selectors threads of this view mode name (their elements' paths), each once. */
export async function threadPathsOf(markupId: string, viewModeId: string): Promise<string[]> {
  const { threads } = await getConversation(markupId);
  const paths = threads
    .filter((thread) => thread.viewModeId === viewModeId)
    .flatMap((thread) => (thread.elements ?? []).map((element) => element.path));
  return [...new Set(paths.filter((path): path is string => typeof path === 'string' && path.length > 0))];
}

/** `GET /markups/{id}/pages/{viewModeId}/layout`: the ready layout of a webpage markup's view mode, 404 until there is one. */
export async function readMarkupPageLayout(principal: Principal, markupId: string, viewModeId: string): Promise<PageLayout> {
  const { markup } = await loadMarkup(principal, markupId);
  const screenshot = markup.pageScreenshots?.[viewModeId];
  const none = () => new NotFoundError(`Markup ${markup.id} has no ready page screenshot for view mode ${viewModeId}.`);
  if (markup.type !== 'webpage' || screenshot?.state !== 'ready') throw none();
  const layout = await readPageLayout(screenshot.layoutKey);
  if (!layout) throw none();
  return layout;
}

/**
 * `GET /markups/{id}/thumbnail`: the rendered PNG. No credential: the unguessable markup id is the
 * capability, like the image URLs of markups; 404 until the thumbnail is rendered.
 */
export async function readMarkupThumbnail(markupId: string): Promise<Buffer> {
  const markup = await getItem(markupId);
  if (!markup || markup.kind !== 'markup' || markup.thumbnailState !== 'ready' || !markup.thumbnailKey) {
    throw new NotFoundError('This markup has no rendered thumbnail.');
  }
  const object = await getS3().send(new GetObjectCommand({ Bucket: getConfig().bucketName, Key: markup.thumbnailKey }));
  return Buffer.from(await object.Body!.transformToByteArray());
}
