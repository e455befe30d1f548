import { randomUUID } from 'node:crypto';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { convertMarkupJob, INTERNAL_FAILURE_MESSAGE } from '../../functions/conversion/convert-markup.js';
import { getS3, resetClients } from '../../shared/clients.js';
import { resetConfig } from '../../shared/config.js';
import { EPS_NOT_ENABLED } from '../../shared/convert/eps.js';
import { ghostscriptModuleUrl } from '../../shared/convert/packages.js';
import { conversionProgressOf } from '../../shared/db/conversion-progress.js';
import { listEvents } from '../../shared/db/events.js';
import { getItem, type MarkupRecord } from '../../shared/db/items.js';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { call, makeOrganization } from '../support/api.js';
import {
  conversionClients,
  deliveryRecord,
  keysUnder as keysIn,
  makePendingMarkup as makePending,
  sendJob as send,
  waitUntilReady,
  type Upload,
} from '../support/conversion-jobs.js';
import { makeMarkup, workspaceOf } from '../support/items.js';
import { ffmpegBuilt, FFMPEG_TEST_TIMEOUT_MS } from '../support/ffmpeg.js';
import { corruptFile, makeEps, makePdf, makePsd, makeTiff, makeVideo, pngSize } from '../support/sample-files.js';
import { uploadFile } from '../support/uploads.js';

const ghostscript = ghostscriptModuleUrl() !== undefined;
if (!ghostscript)
  console.warn('conversion: the optional EPS converter is not installed (npm run converters:eps): the EPS rendering test is skipped');

const clients = conversionClients();
const { services, sqs, s3 } = clients;
const makePendingMarkup = (upload: Upload) => makePending(clients, upload);
const sendJob = (markupId: string) => send(clients, markupId);
const keysUnder = (prefix: string) => keysIn(clients, prefix);

afterAll(() => {
  sqs.destroy();
  s3.destroy();
});

/**
 * Waits until the worker has received every message sent so far (none left visible), then a moment
 * for the last one to finish: a second delivery of a finished job only reads the markup.
 */
async function waitUntilReceived(): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: services.queues.conversion.url, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    if (Number(attributes.Attributes?.ApproximateNumberOfMessages ?? 0) === 0 || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
}

async function objectBytes(key: string): Promise<{ bytes: Buffer; contentType: string | undefined }> {
  const object = await s3.send(new GetObjectCommand({ Bucket: services.bucketName, Key: key }));
  return { bytes: Buffer.from(await object.Body!.transformToByteArray()), contentType: object.ContentType };
}

const readyEvents = async (workspaceId: string, markupId: string) =>
  (await listEvents(workspaceId)).filter((event) => event.type === 'markup_ready' && event.markupId === markupId);

const record = deliveryRecord;

/** The ready markup's thumbnail through the API's plain GET, as the Markup's thumbnailUrl serves it. */
async function thumbnailSize(markupId: string) {
  const response = await fetch(`${inject('localStack').stack.baseUrl}/api/v2/markups/${markupId}/thumbnail`);
  expect(response.status).toBe(200);
  return pngSize(new Uint8Array(await response.arrayBuffer()));
}

describe('the convert-markup job makes converted markups ready (States and transitions: Markup isReady false)', () => {
  it('turns a 2-page TIFF into two page images of their pixel sizes, counts the bytes as images and records markup_ready', async () => {
    const tiff = makeTiff([
      { width: 300, height: 200, rgb: [255, 0, 0] },
      { width: 120, height: 160, rgb: [0, 0, 255] },
    ]);
    const { org, markup } = await makePendingMarkup({ type: 'image', bytes: tiff, filename: 'scan.tiff', mimeType: 'image/tiff' });

    await sendJob(markup.id);
    const ready = await waitUntilReady(markup.id);
    const stored = await Promise.all(ready.images!.map((image) => objectBytes(image.key)));
    const storage = await getStorageBreakdown(org.organizationId);

    expect(ready).toMatchObject({ isReady: true, conversionStatus: 'ready', originalMimeType: 'image/tiff', thumbnailState: 'ready' });
    expect(ready.images!.map(({ width, height, mimeType }) => ({ width, height, mimeType }))).toEqual([
      { width: 300, height: 200, mimeType: 'image/png' },
      { width: 120, height: 160, mimeType: 'image/png' },
    ]);
    expect(stored.map(({ bytes }) => pngSize(bytes))).toEqual([
      { width: 300, height: 200 },
      { width: 120, height: 160 },
    ]);
    expect(stored.map(({ contentType }) => contentType)).toEqual(['image/png', 'image/png']);
    expect(ready.images!.map((image) => image.filesize)).toEqual(stored.map(({ bytes }) => bytes.length));
    expect(ready.images!.map((image) => image.key)).toEqual([`markups/${markup.id}/pages/1.png`, `markups/${markup.id}/pages/2.png`]);
    expect(storage.images).toBe(stored.reduce((sum, { bytes }) => sum + bytes.length, 0));
    expect(await readyEvents(org.workspaceId, markup.id)).toHaveLength(1);
    expect(await thumbnailSize(markup.id)).toEqual({ width: 640, height: 427 });
  });

  it('converts 16-bit and CMYK Photoshop documents into one page image each', async () => {
    const sixteenBit = await makePendingMarkup({
      type: 'image',
      bytes: makePsd({ width: 96, height: 64, depth: 16, mode: 'rgb', colour: [0, 0.5, 1] }),
      filename: 'poster.psd',
      mimeType: 'image/vnd.adobe.photoshop',
    });
    const cmyk = await makePendingMarkup({
      type: 'image',
      bytes: makePsd({ width: 50, height: 80, depth: 8, mode: 'cmyk', colour: [0, 1, 1, 0], rle: true }),
      filename: 'print.psd',
      mimeType: 'image/vnd.adobe.photoshop',
    });

    await Promise.all([sendJob(sixteenBit.markup.id), sendJob(cmyk.markup.id)]);
    const [a, b] = await Promise.all([waitUntilReady(sixteenBit.markup.id), waitUntilReady(cmyk.markup.id)]);

    expect(a).toMatchObject({ conversionStatus: 'ready', originalMimeType: 'image/vnd.adobe.photoshop' });
    expect(a.images).toHaveLength(1);
    expect(a.images![0]).toMatchObject({ width: 96, height: 64, mimeType: 'image/png', filename: 'poster.png' });
    expect(pngSize((await objectBytes(a.images![0]!.key)).bytes)).toEqual({ width: 96, height: 64 });
    expect(b.images).toHaveLength(1);
    expect(b.images![0]).toMatchObject({ width: 50, height: 80 });
    expect(pngSize((await objectBytes(b.images![0]!.key)).bytes)).toEqual({ width: 50, height: 80 });
  });

  it.skipIf(!ghostscript)('renders an EPS at 300 dpi into one page image (the optional EPS converter, installed and enabled)', async () => {
    const { markup } = await makePendingMarkup({
      type: 'image',
      bytes: makeEps({ width: 144, height: 72 }),
      filename: 'logo.eps',
      mimeType: 'application/postscript',
    });

    await sendJob(markup.id);
    const ready = await waitUntilReady(markup.id);

    expect(ready.images).toHaveLength(1);
    expect(ready.images![0]).toMatchObject({ width: 600, height: 300, mimeType: 'image/png' });
    expect(pngSize((await objectBytes(ready.images![0]!.key)).bytes)).toEqual({ width: 600, height: 300 });
  });

  it('fills in a PDF markup document: page count, page sizes in points and a page image per page, counted as pdfs', async () => {
    const sizes = [
      { width: 612, height: 792 },
      { width: 842, height: 595 },
      { width: 200, height: 300 },
    ];
    const { org, markup } = await makePendingMarkup({
      type: 'pdf',
      bytes: await makePdf(sizes),
      filename: 'brief.pdf',
      mimeType: 'application/pdf',
    });

    await sendJob(markup.id);
    const ready = await waitUntilReady(markup.id);
    const pages = ready.document!.pages;
    const stored = await Promise.all(pages.map((page) => objectBytes(page.image!.key)));

    expect(ready).toMatchObject({ conversionStatus: 'ready', thumbnailState: 'ready' });
    expect(ready.images).toBeUndefined();
    expect(ready.document!.pageCount).toBe(3);
    expect(pages.map(({ number, width, height }) => ({ number, width, height }))).toEqual(
      sizes.map((size, i) => ({ number: i + 1, ...size })),
    );
    expect(stored.map(({ bytes }) => pngSize(bytes))).toEqual([
      { width: 918, height: 1188 },
      { width: 1263, height: 893 },
      { width: 300, height: 450 },
    ]);
    expect((await getStorageBreakdown(org.organizationId)).pdfs).toBe(stored.reduce((sum, { bytes }) => sum + bytes.length, 0));
    expect(await thumbnailSize(markup.id)).toEqual({ width: 640, height: 828 });
    // The worker's last progress figure is the whole document; a ready markup no longer reports it.
    expect(await conversionProgressOf(markup.id)).toEqual({ pagesConverted: 3, pageCount: 3, percent: 100 });
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data).not.toHaveProperty('conversionProgress');
  });

  it(
    'makes a web-playable MP4 and a poster from a 2-second WebM, counted as videos',
    async () => {
      await ffmpegBuilt();
      const { org, markup } = await makePendingMarkup({
        type: 'video',
        bytes: await makeVideo({ seconds: 2, width: 320, height: 240, format: 'webm' }),
        filename: 'clip.webm',
        mimeType: 'video/webm',
      });

      await sendJob(markup.id);
      const ready = await waitUntilReady(markup.id);
      const video = ready.video!;
      const [mp4, poster] = await Promise.all([objectBytes(video.file.key), objectBytes(video.poster.key)]);

      expect(ready).toMatchObject({ conversionStatus: 'ready', thumbnailState: 'ready' });
      expect(video).toMatchObject({
        width: 320,
        height: 240,
        file: { key: `markups/${markup.id}/video.mp4`, mimeType: 'video/mp4', filename: 'clip.mp4' },
      });
      expect(video.durationSeconds).toBeGreaterThan(1.9);
      expect(video.durationSeconds).toBeLessThan(2.2);
      expect(mp4.contentType).toBe('video/mp4');
      expect(mp4.bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
      expect(mp4.bytes.indexOf('moov')).toBeLessThan(mp4.bytes.indexOf('mdat'));
      expect(poster.contentType).toBe('image/jpeg');
      expect(video.file.filesize + video.poster.filesize).toBe(mp4.bytes.length + poster.bytes.length);
      expect((await getStorageBreakdown(org.organizationId)).videos).toBe(mp4.bytes.length + poster.bytes.length);
      expect(await thumbnailSize(markup.id)).toEqual({ width: 640, height: 480 });
      // Read from ffmpeg's status lines against the 2-second duration: the last one is at (or next to) the end.
      expect((await conversionProgressOf(markup.id))?.percent).toBeGreaterThanOrEqual(90);
    },
    FFMPEG_TEST_TIMEOUT_MS,
  );
});

describe('a file that cannot be converted ends in the final failed state (isReady true, conversionError)', () => {
  it('marks a corrupt TIFF failed with the reason, stores and counts nothing, and records markup_ready', async () => {
    const { org, markup } = await makePendingMarkup({
      type: 'image',
      bytes: corruptFile('tiff'),
      filename: 'broken.tiff',
      mimeType: 'image/tiff',
    });

    await sendJob(markup.id);
    const done = await waitUntilReady(markup.id);

    expect(done).toMatchObject({ isReady: true, conversionStatus: 'failed', images: [], thumbnailState: 'unavailable' });
    expect(done.conversionError).toMatch(/^The image could not be read: /);
    expect(await keysUnder(`markups/${markup.id}/`)).toEqual([]);
    expect((await getStorageBreakdown(org.organizationId)).total).toBe(0);
    expect(await readyEvents(org.workspaceId, markup.id)).toHaveLength(1);
  });

  it(
    'marks a corrupt video and a PDF whose upload is gone failed',
    async () => {
      await ffmpegBuilt();
      const video = await makePendingMarkup({ type: 'video', bytes: corruptFile('video'), filename: 'broken.mp4', mimeType: 'video/mp4' });
      const pdf = await makePendingMarkup({
        type: 'pdf',
        bytes: await makePdf([{ width: 100, height: 100 }]),
        filename: 'gone.pdf',
        mimeType: 'application/pdf',
        stored: false,
      });

      await Promise.all([sendJob(video.markup.id), sendJob(pdf.markup.id)]);
      const [a, b] = await Promise.all([waitUntilReady(video.markup.id), waitUntilReady(pdf.markup.id)]);

      expect(a).toMatchObject({ conversionStatus: 'failed' });
      expect(a.video).toBeUndefined();
      expect(a.conversionError).toMatch(/not a video ffmpeg can read/);
      expect(b).toMatchObject({
        conversionStatus: 'failed',
        conversionError: 'The uploaded file is no longer in storage; upload it again.',
      });
    },
    FFMPEG_TEST_TIMEOUT_MS,
  );

  it('marks an EPS failed with a reason that says so when the optional EPS converter is not enabled, installed or not', async () => {
    const { org, markup } = await makePendingMarkup({
      type: 'image',
      bytes: makeEps({ width: 144, height: 72 }),
      filename: 'logo.eps',
      mimeType: 'application/postscript',
    });
    const epsConverter = process.env.EPS_CONVERTER;
    process.env.EPS_CONVERTER = '';
    resetConfig();
    try {
      await convertMarkupJob.run({ type: 'convert-markup', markupId: markup.id }, record(1));
    } finally {
      if (epsConverter === undefined) delete process.env.EPS_CONVERTER;
      else process.env.EPS_CONVERTER = epsConverter;
      resetConfig();
    }

    const done = (await getItem(markup.id, true)) as MarkupRecord;

    expect(done).toMatchObject({ isReady: true, conversionStatus: 'failed', images: [], conversionError: EPS_NOT_ENABLED });
    expect(await keysUnder(`markups/${markup.id}/`)).toEqual([]);
    expect(await readyEvents(org.workspaceId, markup.id)).toHaveLength(1);
  });

  it('records the failure on the last delivery before the dead-letter queue when the worker itself keeps failing', async () => {
    const { markup } = await makePendingMarkup({
      type: 'pdf',
      bytes: await makePdf([{ width: 100, height: 100 }]),
      filename: 'a.pdf',
      mimeType: 'application/pdf',
    });
    const job = { type: 'convert-markup' as const, markupId: markup.id };
    const s3Endpoint = process.env.S3_ENDPOINT;
    process.env.S3_ENDPOINT = 'http://127.0.0.1:9';
    resetConfig();
    resetClients();
    let first: unknown;
    let last: unknown;
    try {
      first = await convertMarkupJob.run(job, record(1)).catch((error: unknown) => error);
      const between = (await getItem(markup.id, true)) as MarkupRecord;
      expect(between).toMatchObject({ isReady: false, conversionStatus: 'pending' });
      last = await convertMarkupJob.run(job, record(3)).catch((error: unknown) => error);
    } finally {
      process.env.S3_ENDPOINT = s3Endpoint;
      resetConfig();
      resetClients();
    }

    const after = (await getItem(markup.id, true)) as MarkupRecord;

    expect(first).toBeInstanceOf(Error);
    expect(last).toBeInstanceOf(Error);
    expect(after).toMatchObject({ isReady: true, conversionStatus: 'failed', conversionError: INTERNAL_FAILURE_MESSAGE });
  }, 60_000);
});

describe('the job is idempotent: outputs stored and bytes counted once however often it runs', () => {
  it('stores the outputs and counts the bytes once when the job is delivered twice', async () => {
    const { org, markup } = await makePendingMarkup({
      type: 'image',
      bytes: makeTiff([
        { width: 64, height: 64, rgb: [0, 255, 0] },
        { width: 32, height: 32, rgb: [0, 0, 0] },
      ]),
      filename: 'twice.tif',
      mimeType: 'image/tiff',
    });

    await sendJob(markup.id);
    await sendJob(markup.id);
    const ready = await waitUntilReady(markup.id);
    await waitUntilReceived();
    const after = (await getItem(markup.id, true)) as MarkupRecord;
    const storage = await getStorageBreakdown(org.organizationId);

    expect(after.images).toEqual(ready.images);
    expect(await keysUnder(`markups/${markup.id}/`)).toEqual([
      `markups/${markup.id}/pages/1.png`,
      `markups/${markup.id}/pages/2.png`,
      `markups/${markup.id}/thumbnail.png`,
    ]);
    expect(storage.images).toBe(ready.images!.reduce((sum, image) => sum + image.filesize, 0));
    expect(storage.total).toBe(storage.images);
    expect(await readyEvents(org.workspaceId, markup.id)).toHaveLength(1);
  });

  it('lets exactly one of two concurrent runs make the markup ready', async () => {
    const { org, markup } = await makePendingMarkup({
      type: 'pdf',
      bytes: await makePdf([
        { width: 300, height: 300 },
        { width: 400, height: 200 },
      ]),
      filename: 'race.pdf',
      mimeType: 'application/pdf',
    });
    const job = { type: 'convert-markup' as const, markupId: markup.id };

    await Promise.all([convertMarkupJob.run(job, record(1)), convertMarkupJob.run(job, record(1))]);
    const after = (await getItem(markup.id, true)) as MarkupRecord;
    const pageBytes = after.document!.pages.reduce((sum, page) => sum + page.image!.filesize, 0);

    expect(after).toMatchObject({ conversionStatus: 'ready', document: { pageCount: 2 } });
    expect((await getStorageBreakdown(org.organizationId)).pdfs).toBe(pageBytes);
    expect(await readyEvents(org.workspaceId, markup.id)).toHaveLength(1);
    expect(await keysUnder(`markups/${markup.id}/`)).toHaveLength(3);
  });

  it('does nothing for markups that are not pending or no longer exist', async () => {
    const { org, markup } = await makePendingMarkup({
      type: 'image',
      bytes: makeTiff([{ width: 10, height: 10, rgb: [0, 128, 0] }]),
      filename: 'done.tiff',
      mimeType: 'image/tiff',
    });
    const workspace = await workspaceOf(org.workspaceId);
    const webpage = await makeMarkup({
      workspaceId: org.workspaceId,
      organizationId: workspace.organizationId,
      parentFolderId: workspace.rootFolderId,
    });
    await convertMarkupJob.run({ type: 'convert-markup', markupId: markup.id }, record(1));
    const converted = (await getItem(markup.id, true)) as MarkupRecord;

    await convertMarkupJob.run({ type: 'convert-markup', markupId: markup.id }, record(1));
    await convertMarkupJob.run({ type: 'convert-markup', markupId: webpage.id }, record(1));
    await convertMarkupJob.run({ type: 'convert-markup', markupId: randomUUID() }, record(1));

    expect(await getItem(markup.id, true)).toEqual(converted);
    expect(await getItem(webpage.id, true)).toEqual(webpage);
    expect(await readyEvents(org.workspaceId, markup.id)).toHaveLength(1);
  });

  it('writes nothing and removes its outputs when the markup is deleted during the conversion', async () => {
    const { org, markup } = await makePendingMarkup({
      type: 'pdf',
      bytes: await makePdf(Array.from({ length: 3 }, () => ({ width: 612, height: 792 }))),
      filename: 'deleted.pdf',
      mimeType: 'application/pdf',
    });
    // The job (run in this process) stores page 2 only once the deletion has answered, so the
    // deletion falls inside the conversion however loaded the machine is.
    let deletionAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (deletionAnswered = resolve));
    let pageTwoReached!: () => void;
    const reached = new Promise<void>((resolve) => (pageTwoReached = resolve));
    const gate = 'hold-page-two-until-deleted';
    getS3().middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Key?: string };
        if (input.Key === `markups/${markup.id}/pages/2.png`) {
          pageTwoReached();
          await answered;
        }
        return next(args);
      },
      { step: 'initialize', name: gate },
    );
    try {
      const running = convertMarkupJob.run({ type: 'convert-markup', markupId: markup.id }, record(1));
      await Promise.race([reached, running]);
      const deleted = await call('DELETE', `/markups/${markup.id}`, { key: org.orgKey });
      deletionAnswered();
      await running;
      expect(deleted.status).toBe(204);
    } finally {
      getS3().middlewareStack.remove(gate);
    }

    expect(await getItem(markup.id, true)).toBeUndefined();
    expect(await keysUnder(`markups/${markup.id}/`)).toEqual([]);
    expect((await getStorageBreakdown(org.organizationId)).pdfs).toBe(0);
    expect(await readyEvents(org.workspaceId, markup.id)).toHaveLength(0);
  });
});

describe('end to end: upload, POST /markups/from-files, the worker, GET /markups/{id}', () => {
  it('shows a PSD markup not ready at first, then ready with its converted image and a thumbnail', async () => {
    const org = await makeOrganization();
    const bytes = makePsd({ width: 120, height: 90, depth: 16, mode: 'rgb', colour: [1, 0.5, 0] });
    const file = await uploadFile(org.workspaceKey, { bytes, filename: 'hero.psd', contentType: 'image/vnd.adobe.photoshop' });

    const created = await call('POST', '/markups/from-files', {
      key: org.workspaceKey,
      body: { workspaceId: org.workspaceId, fileIds: [file.fileId] },
    });
    await waitUntilReady(created.body.data.id);
    const read = await call('GET', `/markups/${created.body.data.id}`, { key: org.workspaceKey });
    const image = await fetch(read.body.data.images[0].url);
    const storage = await getStorageBreakdown(org.organizationId);

    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.data).toMatchObject({ type: 'image', isReady: false, images: [], conversionStatus: 'pending' });
    expect(created.body.data.conversionProgress).toEqual(expect.any(Object));
    expect(read.body.data).toMatchObject({
      isReady: true,
      originalMimeType: 'image/vnd.adobe.photoshop',
      images: [{ mimeType: 'image/png' }],
    });
    expect(read.body.data.thumbnailUrl).toMatch(/\/api\/v2\/markups\/[0-9a-f-]{36}\/thumbnail$/);
    expect(image.status).toBe(200);
    expect(pngSize(new Uint8Array(await image.arrayBuffer()))).toEqual({ width: 120, height: 90 });
    expect(storage.images).toBe(read.body.data.images[0].filesize);
    expect(await readyEvents(org.workspaceId, created.body.data.id)).toHaveLength(1);
  });
});
