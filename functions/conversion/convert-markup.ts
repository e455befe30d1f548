import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, parse } from 'node:path';
import * as v from 'valibot';
import { getConfig } from '../../shared/config.js';
import { convertEps } from '../../shared/convert/eps.js';
import { ConversionError } from '../../shared/convert/errors.js';
import { makeThumbnail, readHead, sourceKind, type RenderedImage } from '../../shared/convert/images.js';
import { convertPdf } from '../../shared/convert/pdf.js';
import { convertPsd } from '../../shared/convert/psd.js';
import { convertTiff } from '../../shared/convert/tiff.js';
import { convertVideo } from '../../shared/convert/video.js';
import {
  finishFailedRun,
  markReady,
  recordProgress,
  requireMarkupStill,
  startConversion,
  type ConversionProgress,
  type Converted,
  type MarkupDocumentRecord,
  type MarkupImageRecord,
  type MarkupRecord,
  type MarkupVideoRecord,
} from '../../shared/domain/markups/conversion-outcome.js';
import { defineJob } from '../../shared/events/queue-worker.js';
import { logger } from '../../shared/logger.js';
import { QUEUES } from '../../shared/queues.js';
import { INTERNAL_FAILURE_MESSAGE } from './markup-outcome.js';
import { conversionKeys, downloadObject, OutputObjects } from './objects.js';

export { INTERNAL_FAILURE_MESSAGE };

/** Time kept back from the worker's timeout for storing the outputs and recording the result. */
const SAFETY_MARGIN_MS = 45_000;

/**
 * Converts a file markup's uploaded source (TIFF/PSD/EPS into page images, a PDF into page images
 * with page sizes, a video into web-playable MP4 with a poster) and makes it ready.
 *
 * Idempotent under SQS's at-least-once delivery: only a `pending` markup is converted; outputs go to
 * fixed keys, so a retry overwrites rather than duplicates; and the write that makes the markup
 * ready is one transaction, conditional on `conversionStatus` still being `pending`, that also adds
 * the stored bytes to the organization's counter, so bytes are counted and `markup_ready` recorded
 * once however often the job runs. Files that cannot be converted (ConversionError), a breach of
 * CONVERSION_LIMITS among them, end in the final `failed` state at once and the message is
 * acknowledged; other failures throw and are retried. The last delivery before the dead-letter
 * queue records the failure, and a run killed before it could is failed by the dead-letter
 * consumer (dead-letters.ts), so no markup stays pending.
 *
 * Such a death is not the file's fault, so the job, redriven from the hold queue once the cause is
 * fixed (`admin queue redrive --queue conversion`), makes the markup pending again with a
 * conditional write (reopenDeadConversion) and converts it as if new, with all its deliveries; a
 * markup whose original was archived meanwhile (NEVER_STORE) has nothing left to convert and stays
 * failed. Any other finished markup is left as it is.
 *
 * A markup deleted before or during a run leaves nothing behind (DESIGN.md "Deletion takes
 * everything"): the deletion empties the markup's prefix, and every run that finds the markup gone
 * after writing (its settling write fails; a later delivery finds no record) empties it again. A
 * run looks before each page and stops as soon as the markup is gone.
 */
export const convertMarkupJob = defineJob({
  schema: v.object({ type: v.literal('convert-markup'), markupId: v.pipe(v.string(), v.uuid()) }),
  run: async (job, record) => {
    const markup = await startConversion(job.markupId);
    if (!markup) return;
    const lastDelivery = Number(record.attributes.ApproximateReceiveCount) >= QUEUES.conversion.maxReceiveCount;
    const deadline = Date.now() + QUEUES.conversion.workerTimeoutSeconds * 1000 - SAFETY_MARGIN_MS;
    const outputs = new OutputObjects();
    const workDir = await mkdtemp(join(tmpdir(), 'convert-'));
    const started = Date.now();
    const progress = new ProgressReporter(markup.id);
    try {
      const converted = await convert(markup, workDir, outputs, deadline, progress);
      await progress.settled({ flush: true });
      await markReady(markup, converted, outputs);
      logger.info('markup converted', { markupId: markup.id, type: markup.type, bytes: converted.bytes, ms: Date.now() - started });
    } catch (error) {
      await finishFailedRun(markup, error, { lastDelivery, outputs, startedAt: started });
    } finally {
      await progress.settled();
      await rm(workDir, { recursive: true, force: true });
    }
  },
});

async function convert(
  markup: MarkupRecord,
  workDir: string,
  outputs: OutputObjects,
  deadline: number,
  progress: ProgressReporter,
): Promise<Converted> {
  if (!markup.source) throw new ConversionError('The markup has no uploaded file to convert.');
  // A run that starts again (a retry, a redrive) starts from nothing, whatever an earlier run reached.
  progress.report(markup.type === 'video' ? { percent: 0 } : { pagesConverted: 0 }, { now: true });
  const input = join(workDir, 'source');
  await downloadObject(markup.source.key, input);
  const base = parse(markup.source.filename ?? markup.name).name || 'page';
  const thumbnails = new ThumbnailMaker(markup.id, outputs);

  if (markup.type === 'video') {
    const video = await convertVideo(input, workDir, {
      timeoutMs: deadline - Date.now(),
      onProgress: (percent) => progress.report({ percent }),
    });
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
      await requireMarkupStill(markup.id);
      const extension = page.image.mimeType === 'image/png' ? 'png' : 'jpg';
      const image = await outputs.put(
        conversionKeys.page(markup.id, page.number, extension),
        page.image.data,
        page.image.mimeType,
        `${base}-page-${page.number}.${extension}`,
      );
      if (page.number === 1) await thumbnails.from(page.image);
      pages.push({ number: page.number, width: page.width, height: page.height, image });
      progress.report({
        pagesConverted: page.number,
        pageCount: page.pageCount,
        percent: Math.floor((page.number / page.pageCount) * 100),
      });
    }
    const bytes = pages.reduce((sum, page) => sum + (page.image?.filesize ?? 0), 0);
    return { changes: { document: { pageCount: pages.length, pages } }, category: 'pdfs', bytes, thumbnail: thumbnails.result() };
  }

  if (markup.type === 'image') {
    const kind = sourceKind(await readHead(input), markup.originalMimeType ?? markup.source.mimeType);
    const images: MarkupImageRecord[] = [];
    const store = async (page: RenderedImage) => {
      checkDeadline(deadline);
      await requireMarkupStill(markup.id);
      const number = images.length + 1;
      const stored = await outputs.put(conversionKeys.page(markup.id, number, 'png'), page.data, page.mimeType, `${base}-${number}.png`);
      if (number === 1) await thumbnails.from(page);
      images.push({ id: randomUUID(), ...stored, width: page.width, height: page.height });
      progress.report({ pagesConverted: number });
    };
    if (kind === 'psd') await store(await convertPsd(input));
    else if (kind === 'eps') for (const page of await convertEps(input, { enabled: getConfig().epsConverter })) await store(page);
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

/** Progress is written at most this often (a 500-page PDF converts several pages a second). */
const PROGRESS_INTERVAL_MS = 1000;

/**
 * Writes how far the run has come (shared/db/conversion-progress.ts) for the app's progress bar:
 * the latest figure at most once a second, one write at a time, never failing the conversion.
 */
class ProgressReporter {
  private writing: Promise<void> = Promise.resolve();
  private latest: ConversionProgress | undefined;
  private lastWrite = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly markupId: string) {}

  report(progress: ConversionProgress, options: { now?: boolean } = {}): void {
    this.latest = progress;
    if (this.timer) return;
    const wait = options.now ? 0 : Math.max(0, this.lastWrite + PROGRESS_INTERVAL_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
  }

  /** Waits for the write under way; the figure not yet written is written first with `flush`, else dropped. */
  async settled(options: { flush?: boolean } = {}): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (options.flush) this.flush();
    await this.writing;
  }

  private flush(): void {
    const progress = this.latest;
    if (!progress) return;
    this.latest = undefined;
    this.lastWrite = Date.now();
    this.writing = this.writing.then(() =>
      recordProgress(this.markupId, progress).catch((error: unknown) =>
        logger.warn('conversion progress not recorded', { markupId: this.markupId, error }),
      ),
    );
  }
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
