import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, parse } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { getDb } from '../../shared/clients.js';
import { convertEps } from '../../shared/convert/eps.js';
import { ConversionError } from '../../shared/convert/errors.js';
import { makeThumbnail, readHead, sourceKind, type RenderedImage } from '../../shared/convert/images.js';
import { convertPdf } from '../../shared/convert/pdf.js';
import { convertPsd } from '../../shared/convert/psd.js';
import { convertTiff } from '../../shared/convert/tiff.js';
import { convertVideo } from '../../shared/convert/video.js';
import { isConditionFailure } from '../../shared/db/errors.js';
import { applyPolicyAfterConversion } from '../../shared/domain/originals.js';
import { recordEvent } from '../../shared/db/events.js';
import { getItem, itemUpdate, type MarkupDocumentRecord, type MarkupImageRecord, type MarkupRecord, type MarkupVideoRecord } from '../../shared/db/items.js';
import { storageDelta, type StorageCategory } from '../../shared/db/storage.js';
import { transact } from '../../shared/db/transact.js';
import { defineJob } from '../../shared/events/queue-worker.js';
import { logger } from '../../shared/logger.js';
import { QUEUES } from '../../shared/queues.js';
import { conversionKeys, downloadObject, OutputObjects } from './objects.js';

/** Time kept back from the worker's timeout for storing the outputs and recording the result. */
const SAFETY_MARGIN_MS = 45_000;

/** What users see when the worker itself kept failing (after the last retry). */
export const INTERNAL_FAILURE_MESSAGE = 'The file could not be converted because of an internal error; upload it again to retry.';

/**
 * Converts a file markup's uploaded source (TIFF/PSD/EPS into page images, a PDF into page images
 * with page sizes, a video into web-playable MP4 with a poster) and makes it ready.
 *
 * Idempotent under SQS's at-least-once delivery: only a `pending` markup is converted; outputs go to
 * fixed keys, so a retry overwrites rather than duplicates; and the write that makes the markup
 * ready is one transaction, conditional on `conversionStatus` still being `pending`, that also adds
 * the stored bytes to the organization's counter, so bytes are counted and `markup_ready` recorded
 * once however often the job runs. Files that cannot be converted (ConversionError) end in the final
 * `failed` state at once; other failures throw and are retried, and the last delivery before the
 * dead-letter queue records the failure so no markup stays pending.
 */
export const convertMarkupJob = defineJob({
  schema: v.object({ type: v.literal('convert-markup'), markupId: v.pipe(v.string(), v.uuid()) }),
  run: async (job, record) => {
    const markup = await getItem(job.markupId, true);
    if (!markup || markup.kind !== 'markup') return;
    if (markup.conversionStatus !== 'pending') {
      // A retry of a finished conversion: only the (idempotent) policy step may still be owed.
      if (markup.conversionStatus) await applyPolicyAfterConversion(markup.id);
      return;
    }
    const lastAttempt = Number(record.attributes.ApproximateReceiveCount) >= QUEUES.conversion.maxReceiveCount;
    const deadline = Date.now() + QUEUES.conversion.workerTimeoutSeconds * 1000 - SAFETY_MARGIN_MS;
    const outputs = new OutputObjects();
    const workDir = await mkdtemp(join(tmpdir(), 'convert-'));
    const started = Date.now();
    try {
      const converted = await convert(markup, workDir, outputs, deadline);
      await markReady(markup, converted, outputs);
      logger.info('markup converted', { markupId: markup.id, type: markup.type, bytes: converted.bytes, ms: Date.now() - started });
    } catch (error) {
      if (error instanceof ConversionError) {
        logger.info('markup conversion failed', { markupId: markup.id, type: markup.type, reason: error.message });
        await markFailed(markup, error.message, outputs);
        return;
      }
      if (lastAttempt) {
        await markFailed(markup, INTERNAL_FAILURE_MESSAGE, outputs).catch((markError: unknown) =>
          logger.error('conversion failure not recorded', { markupId: markup.id, error: markError }),
        );
      }
      throw error;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  },
});

interface Converted {
  changes: Pick<MarkupRecord, 'images' | 'document' | 'video' | 'originalMimeType'>;
  category: StorageCategory;
  /** Bytes of every file the markup now records (its images, page images, or video and poster). */
  bytes: number;
  thumbnail: { key: string } | { error: string };
}

async function convert(markup: MarkupRecord, workDir: string, outputs: OutputObjects, deadline: number): Promise<Converted> {
  if (!markup.source) throw new ConversionError('The markup has no uploaded file to convert.');
  const input = join(workDir, 'source');
  await downloadObject(markup.source.key, input);
  const base = parse(markup.source.filename ?? markup.name).name || 'page';
  const thumbnails = new ThumbnailMaker(markup.id, outputs);

  if (markup.type === 'video') {
    const video = await convertVideo(input, workDir, { timeoutMs: deadline - Date.now() });
    const file = await outputs.put(conversionKeys.video(markup.id), video.file.path, video.file.mimeType, `${base}.mp4`);
    const poster = await outputs.put(conversionKeys.poster(markup.id), video.poster.data, video.poster.mimeType, `${base}.jpg`);
    await thumbnails.from(video.poster);
    const record: MarkupVideoRecord = { file, durationSeconds: video.durationSeconds, width: video.width, height: video.height, poster };
    return { changes: { video: record }, category: 'videos', bytes: file.filesize + poster.filesize, thumbnail: thumbnails.result() };
  }

  if (markup.type === 'pdf') {
    const pages: MarkupDocumentRecord['pages'] = [];
    for await (const page of convertPdf(input)) {
      checkDeadline(deadline);
      const extension = page.image.mimeType === 'image/png' ? 'png' : 'jpg';
      const image = await outputs.put(conversionKeys.page(markup.id, page.number, extension), page.image.data, page.image.mimeType, `${base}-page-${page.number}.${extension}`);
      if (page.number === 1) await thumbnails.from(page.image);
      pages.push({ number: page.number, width: page.width, height: page.height, image });
    }
    const bytes = pages.reduce((sum, page) => sum + (page.image?.filesize ?? 0), 0);
    return { changes: { document: { pageCount: pages.length, pages } }, category: 'pdfs', bytes, thumbnail: thumbnails.result() };
  }

  if (markup.type === 'image') {
    const kind = sourceKind(await readHead(input), markup.originalMimeType ?? markup.source.mimeType);
    const images: MarkupImageRecord[] = [];
    const store = async (page: RenderedImage) => {
      checkDeadline(deadline);
      const number = images.length + 1;
      const stored = await outputs.put(conversionKeys.page(markup.id, number, 'png'), page.data, page.mimeType, `${base}-${number}.png`);
      if (number === 1) await thumbnails.from(page);
      images.push({ id: randomUUID(), ...stored, width: page.width, height: page.height });
    };
    if (kind === 'psd') await store(await convertPsd(input));
    else if (kind === 'eps') for (const page of await convertEps(input)) await store(page);
    else for await (const page of convertTiff(input)) await store(page);
    // One page keeps the plain name; pages of a multi-page TIFF are numbered.
    if (images.length === 1 && images[0]) images[0].filename = `${base}.png`;
    const bytes = images.reduce((sum, image) => sum + image.filesize, 0);
    return {
      changes: { images, originalMimeType: markup.originalMimeType ?? markup.source.mimeType },
      category: 'images',
      bytes,
      thumbnail: thumbnails.result(),
    };
  }

  throw new ConversionError(`Markups of type ${markup.type} are not converted.`);
}

function checkDeadline(deadline: number): void {
  if (Date.now() > deadline) throw new ConversionError('The file took too long to convert.');
}

/** The thumbnail from the first page or the poster; a thumbnail that cannot be made does not fail the conversion. */
class ThumbnailMaker {
  private outcome: { key: string } | { error: string } = { error: 'No page to make a thumbnail from.' };

  constructor(
    private readonly markupId: string,
    private readonly outputs: OutputObjects,
  ) {}

  async from(image: RenderedImage): Promise<void> {
    try {
      const thumbnail = await makeThumbnail(image.data);
      const stored = await this.outputs.put(conversionKeys.thumbnail(this.markupId), thumbnail.data, thumbnail.mimeType);
      this.outcome = { key: stored.key };
    } catch (error) {
      if (!(error instanceof ConversionError)) throw error;
      this.outcome = { error: error.message };
    }
  }

  result() {
    return this.outcome;
  }
}

const stillPending = { expression: '#cs = :pending', names: { '#cs': 'conversionStatus' }, values: { ':pending': 'pending' } };

/**
 * Makes the markup ready and counts its bytes in one transaction that holds only while the markup
 * is still pending: of concurrent or repeated runs exactly one gets through, and it alone records
 * `markup_ready`. If the markup was deleted meanwhile, the outputs are removed again.
 */
async function markReady(markup: MarkupRecord, converted: Converted, outputs: OutputObjects): Promise<void> {
  const ready: MarkupRecord = {
    ...markup,
    ...converted.changes,
    isReady: true,
    conversionStatus: 'ready',
    conversionError: undefined,
    modifiedAt: Date.now(),
    ...('key' in converted.thumbnail
      ? { thumbnailState: 'ready' as const, thumbnailKey: converted.thumbnail.key, thumbnailError: undefined }
      : { thumbnailState: 'unavailable' as const, thumbnailError: converted.thumbnail.error }),
  };
  const update = itemUpdate(markup, ready, { when: stillPending });
  if (!update) return;
  try {
    await transact([{ Update: update }, { Update: storageDelta(markup.organizationId, converted.category, converted.bytes) }]);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    await afterLostRace(markup, outputs);
    return;
  }
  await finish(markup);
}

/**
 * The final failed state: `isReady` true (the worker is done), no images/document/video, the reason
 * in `conversionError`. Whatever this run stored is removed; `markup_ready` is recorded because
 * `isReady` became true (States and transitions), so listeners stop waiting.
 */
async function markFailed(markup: MarkupRecord, reason: string, outputs: OutputObjects): Promise<void> {
  const failed: MarkupRecord = {
    ...markup,
    ...(markup.type === 'image' ? { images: [] } : {}),
    document: undefined,
    video: undefined,
    isReady: true,
    conversionStatus: 'failed',
    conversionError: reason,
    modifiedAt: Date.now(),
    thumbnailState: 'unavailable',
    thumbnailKey: undefined,
    thumbnailError: reason,
  };
  const update = itemUpdate(markup, failed, { when: stillPending });
  if (!update) return;
  try {
    await getDb().send(new UpdateCommand(update));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    await afterLostRace(markup, outputs);
    return;
  }
  await outputs.deleteAll().catch((error: unknown) => logger.warn('conversion outputs not removed', { markupId: markup.id, error }));
  await finish(markup);
}

/**
 * The markup was no longer pending. If another run made it ready, its outputs are the very objects
 * this run wrote (same keys, same bytes), so they stay. If it was deleted, or another run recorded a
 * failure, nothing refers to them and they go.
 */
async function afterLostRace(markup: MarkupRecord, outputs: OutputObjects): Promise<void> {
  const current = await getItem(markup.id, true);
  const status = current?.kind === 'markup' ? current.conversionStatus : undefined;
  logger.info('markup no longer pending', { markupId: markup.id, conversionStatus: status ?? 'deleted' });
  if (status === 'ready') return;
  await outputs.deleteAll().catch((error: unknown) => logger.warn('conversion outputs not removed', { markupId: markup.id, error }));
}

/** What follows a finished conversion, once: the event, then the workspace's original-file policy. */
async function finish(markup: MarkupRecord): Promise<void> {
  await recordReady(markup);
  await applyPolicyAfterConversion(markup.id);
}

/**
 * Records `markup_ready` in the workspace the markup is in now (it may have moved during the
 * conversion). Runs once, after the conditional write that only one run passes; a failure here is
 * logged, not retried, since a retry would find the markup done and skip.
 */
async function recordReady(markup: MarkupRecord): Promise<void> {
  try {
    const current = await getItem(markup.id, true);
    await recordEvent({ type: 'markup_ready', workspaceId: current?.workspaceId ?? markup.workspaceId, markupId: markup.id });
  } catch (error) {
    logger.error('markup_ready not recorded', { markupId: markup.id, error });
  }
}
