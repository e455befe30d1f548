import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useLocalServices } from '../../infra/local/stack.js';
import { authenticate } from '../../shared/auth/authenticate.js';
import { withPermission } from '../../shared/auth/authorize.js';
import { listEvents } from '../../shared/db/events.js';
import { getItem, toItem, type FolderRecord } from '../../shared/db/items.js';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { putNew, transact } from '../../shared/db/core/transact.js';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { newFileMarkupRecord } from '../../shared/domain/markups/file-markup-records.js';
import { createMarkupFromUploads } from '../../shared/domain/markups/file-markups.js';
import { putObject } from '../../shared/storage/objects.js';
import { call, localStack, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { makeFolder } from '../support/markups.js';
import {
  fileForm,
  jpegBytes,
  pdfBytes,
  pngBytes,
  postFileMarkup,
  readUploadRecord,
  tiffBytes,
  uploadFile,
  videoBytes,
} from '../support/uploads.js';
import { makeSecondWorkspace, usedThisMonth } from '../support/workspaces.js';

type Org = Awaited<ReturnType<typeof makeOrganization>>;

const png = (org: Org, filename = 'screen.png', bytes?: Buffer) =>
  (async () => uploadFile(org.workspaceKey, { bytes: bytes ?? (await pngBytes()), filename, contentType: 'image/png' }))();

function fromFiles(key: string, body: Record<string, unknown>) {
  return call('POST', '/markups/from-files', { key, body });
}

describe('POST /markups/from-files with displayable images (Markups rules 3, 5, 6; MarkupImage rule 1)', () => {
  it('makes ONE ready image markup, one page per image in fileIds order, each URL serving the exact uploaded bytes', async () => {
    const org = await makeOrganization();
    const first = await pngBytes(4, 3);
    const second = await jpegBytes(5, 2);
    const third = await pngBytes(2, 9, { r: 1, g: 2, b: 3 });
    const a = await png(org, 'Landing page.v2.png', first);
    const b = await uploadFile(org.workspaceKey, { bytes: second, filename: 'photo.jpg', contentType: 'image/jpeg' });
    const c = await png(org, 'footer.png', third);
    const usedBefore = await usedThisMonth(org.workspaceKey);

    const response = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [b.fileId, a.fileId, c.fileId] });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const markup = response.body.data;
    expect(markup).toMatchObject({ type: 'image', name: 'photo', isReady: true, workspaceId: org.workspaceId });
    expect(markup.originalMimeType).toBeUndefined();
    expect(markup.images.map((image: { id: string }) => image.id)).toEqual([b.fileId, a.fileId, c.fileId]);
    expect(markup.images[0]).toMatchObject({ mimeType: 'image/jpeg', filesize: second.length, width: 5, height: 2 });
    expect(markup.images[1]).toMatchObject({ mimeType: 'image/png', filesize: first.length, width: 4, height: 3 });
    const served = await Promise.all(
      markup.images.map(async (image: { url: string }) => Buffer.from(await (await fetch(image.url)).arrayBuffer())),
    );
    expect(served).toEqual([second, first, third]);
    expect(new URL(markup.thumbnailUrl).pathname).toBe(new URL(markup.images[0].url).pathname);
    expect(await usedThisMonth(org.workspaceKey)).toBe(usedBefore + 1);
    expect((await listEvents(org.workspaceId)).filter((event) => event.markupId === markup.id)).toEqual([
      expect.objectContaining({ type: 'markup_created', markupId: markup.id }),
    ]);
    for (const { fileId } of [a, b, c]) expect(await readUploadRecord(fileId)).toMatchObject({ state: 'consumed', consumedBy: markup.id });
  });

  it('takes the name and folder given, and a generic content type by its extension', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);
    const file = await uploadFile(org.workspaceKey, {
      bytes: await pngBytes(),
      filename: 'export.png',
      contentType: 'application/octet-stream',
    });

    const response = await fromFiles(org.orgKey, {
      workspaceId: org.workspaceId,
      fileIds: [file.fileId],
      name: 'Homepage review',
      parentFolderId: folder.id,
    });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ type: 'image', name: 'Homepage review', parentFolderId: folder.id, isReady: true });
    expect(response.body.data.images[0].mimeType).toBe('image/png');
  });
});

describe('POST /markups/from-files with a file needing conversion (Markups rules 4 and 5; States: isReady false)', () => {
  it.each([
    ['a PDF', () => pdfBytes(), 'brief.pdf', 'application/pdf', 'pdf', undefined, 'pdfs'],
    ['a video', () => videoBytes(), 'demo.mp4', 'video/mp4', 'video', undefined, 'videos'],
    ['a TIFF', () => tiffBytes(), 'scan.tiff', 'image/tiff', 'image', 'image/tiff', 'images'],
  ] as const)(
    'makes %s into a pending markup with its source, not ready, conversion queued',
    async (_case, bytes, filename, contentType, type, originalMimeType, category) => {
      const org = await makeOrganization();
      const content = await bytes();
      const file = await uploadFile(org.workspaceKey, { bytes: content, filename, contentType });

      const response = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [file.fileId] });

      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const markup = response.body.data;
      expect(markup).toMatchObject({ type, isReady: false, conversionStatus: 'pending', name: filename.replace(/\.[^.]+$/, '') });
      expect(markup.originalMimeType).toBe(originalMimeType);
      if (type === 'image') expect(markup.images).toEqual([]);
      expect(markup.document).toBeUndefined();
      expect(markup.video).toBeUndefined();
      const record = await getItem(markup.id);
      expect(record).toMatchObject({ source: { key: file.policy.key, mimeType: contentType, filesize: content.length, filename } });
      // The source becomes the markup's original: its bytes move from its category to `originals`.
      expect(await readUploadRecord(file.fileId)).toMatchObject({ state: 'consumed', consumedBy: markup.id, category });
      expect((await getStorageBreakdown(org.organizationId)).originals).toBe(content.length);
      expect(record).toMatchObject({ hasRetainedOriginal: true, retainOriginal: false });
    },
  );
});

describe('A conversion that cannot be queued (nothing stays pending)', () => {
  it('marks the markup failed, ready, with the reason, and gives its charge back, when the conversion job cannot be sent', async () => {
    const org = await makeOrganization();
    const file = await uploadFile(org.workspaceKey, { bytes: pdfBytes(), filename: 'a.pdf', contentType: 'application/pdf' });
    const { services } = localStack();
    const principal = withPermission(await authenticate(`Bearer ${org.workspaceKey}`), 'markup:create');

    useLocalServices({
      ...services,
      queues: { ...services.queues, conversion: { ...services.queues.conversion, url: 'http://127.0.0.1:9/queue/unreachable' } },
    });
    const created = await createMarkupFromUploads(principal, { workspaceId: org.workspaceId, fileIds: [file.fileId] }).finally(() =>
      useLocalServices(services),
    );

    expect(created.record).toMatchObject({ isReady: true, conversionStatus: 'failed' });
    expect(created.record.conversionError).toContain('could not be scheduled');
    const read = await call('GET', `/markups/${created.record.id}`, { key: org.workspaceKey });
    expect(read.body.data).toMatchObject({ isReady: true, conversionStatus: 'failed', conversionError: created.record.conversionError });
    const events = (await listEvents(org.workspaceId)).filter((event) => event.markupId === created.record.id);
    expect(events.map((event) => event.type).sort()).toEqual(['markup_created', 'markup_ready']);
    // A markup whose conversion failed does not count against the month (DESIGN.md).
    expect(await usedThisMonth(org.workspaceKey)).toBe(0);
  });
});

describe('POST /markups/from-files rejections (Errors table)', () => {
  it.each([
    ['no file ids', () => []],
    ['51 file ids', () => Array.from({ length: 51 }, () => randomUUID())],
  ])('answers 400 for %s', async (_case, ids) => {
    const org = await makeOrganization();

    const response = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: ids() });

    expect(response.status).toBe(400);
    expect(response.body.errors[0].pointer).toBe('/body/fileIds');
  });

  it('answers 400 for a file id listed twice, and nothing is consumed', async () => {
    const org = await makeOrganization();
    const file = await png(org);

    const response = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [file.fileId, file.fileId] });

    expect(response.status).toBe(400);
    expect(response.body.type).toBe('urn:review-board:problem:duplicate-id');
    expect((await readUploadRecord(file.fileId))?.state).toBe('confirmed');
  });

  it('answers 400 for an unknown file id and for an upload never confirmed', async () => {
    const org = await makeOrganization();
    const unconfirmed = await uploadFile(
      org.workspaceKey,
      { bytes: await pngBytes(), filename: 'a.png', contentType: 'image/png' },
      { confirm: false },
    );

    const unknown = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [randomUUID()] });
    const pending = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [unconfirmed.fileId] });

    expect(unknown.status).toBe(400);
    expect(unknown.body.type).toBe('urn:review-board:problem:unknown-file');
    expect(pending.status).toBe(400);
    expect(pending.body.type).toBe('urn:review-board:problem:file-not-confirmed');
  });

  it('answers 400 telling to upload again when a file was already used by another markup', async () => {
    const org = await makeOrganization();
    const file = await png(org);
    const first = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [file.fileId] });

    const again = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [file.fileId] });

    expect(first.status).toBe(200);
    expect(again.status).toBe(400);
    expect(again.body.type).toBe('urn:review-board:problem:file-already-used');
    expect(again.body.detail).toContain('upload it again');
  });

  it.each([
    ['images with a PDF', ['png', 'pdf'], 'files-mixed'],
    ['a video with an image', ['mp4', 'png'], 'files-mixed'],
    ['two PDFs', ['pdf', 'pdf'], 'several-converted-files'],
    ['a PDF and a video', ['pdf', 'mp4'], 'several-converted-files'],
  ])('answers 400 for a set mixing %s, consuming nothing', async (_case, kinds, slug) => {
    const org = await makeOrganization();
    const files = [];
    for (const kind of kinds) {
      if (kind === 'png') files.push(await png(org));
      if (kind === 'pdf')
        files.push(await uploadFile(org.workspaceKey, { bytes: pdfBytes(), filename: 'a.pdf', contentType: 'application/pdf' }));
      if (kind === 'mp4')
        files.push(await uploadFile(org.workspaceKey, { bytes: videoBytes(), filename: 'a.mp4', contentType: 'video/mp4' }));
    }

    const response = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: files.map((file) => file.fileId) });

    expect(response.status).toBe(400);
    expect(response.body.type).toBe(`urn:review-board:problem:${slug}`);
    for (const file of files) expect((await readUploadRecord(file.fileId))?.state).toBe('confirmed');
  });

  it('answers 403 for a file uploaded into another workspace', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const elsewhere = await uploadFile(org.orgKey, {
      bytes: await pngBytes(),
      filename: 'a.png',
      contentType: 'image/png',
      resourceId: second.rootFolderId,
    });

    const response = await fromFiles(org.orgKey, { workspaceId: org.workspaceId, fileIds: [elsewhere.fileId] });

    expect(response.status).toBe(403);
    expect(response.body.type).toBe('urn:review-board:problem:file-in-another-workspace');
  });

  it("answers 403 when workspaceId is not the key's workspace (Authentication rule 4)", async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();
    const file = await png(org);

    const response = await fromFiles(org.workspaceKey, { workspaceId: other.workspaceId, fileIds: [file.fileId] });

    expect(response.status).toBe(403);
  });

  it('answers 402 when the combined size of the set exceeds the storage limit, consuming nothing', async () => {
    const org = await makeOrganization();
    const a = await pngBytes(40, 40);
    const b = await pngBytes(41, 40);
    const first = await uploadFile(org.workspaceKey, { bytes: a, filename: 'a.png', contentType: 'image/png' }, { confirm: false });
    const second = await uploadFile(org.workspaceKey, { bytes: b, filename: 'b.png', contentType: 'image/png' }, { confirm: false });
    for (const file of [first, second])
      expect(
        (await call('POST', '/uploads/upload-complete', { key: org.workspaceKey, body: { fileId: file.fileId, etag: file.etag } })).status,
      ).toBe(200);
    // Policies reserve their sizes, so two files over the limit can only be stored before the plan is lowered.
    await setPlan(org.organizationId, { storageLimitBytes: a.length + b.length - 1 });

    const response = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [first.fileId, second.fileId] });

    expect(response.status).toBe(402);
    expect(response.body.type).toBe('urn:review-board:problem:storage-limit-reached');
    expect(response.body.detail).toMatch(
      new RegExp(`^A markup of 2 files \\(${a.length + b.length} bytes\\) does not fit the plan's storage`),
    );
    expect((await readUploadRecord(first.fileId))?.state).toBe('confirmed');
  });

  it('answers 402 when the monthly allowance is used up; the files stay usable', async () => {
    const org = await makeOrganization();
    const file = await png(org);
    await setPlan(org.organizationId, { markupLimit: 0, bundleBalance: 0 });

    const refused = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [file.fileId] });
    await setPlan(org.organizationId, { markupLimit: 5 });
    const accepted = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [file.fileId] });

    expect(refused.status).toBe(402);
    expect(accepted.status).toBe(200);
  });

  it('counts a set of 50 images as ONE markup', async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes(1, 1);
    const files = await Promise.all(Array.from({ length: 50 }, (_, i) => png(org, `page-${i}.png`, bytes)));
    const usedBefore = await usedThisMonth(org.workspaceKey);

    const response = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: files.map((file) => file.fileId) });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.images).toHaveLength(50);
    expect(response.body.data.name).toBe('page-0');
    expect(await usedThisMonth(org.workspaceKey)).toBe(usedBefore + 1);
  });
});

describe('Concurrent creations from the same file (States: confirmed -> consumed)', () => {
  it('lets exactly one of 10 parallel requests create a markup; the other nine get 400', async () => {
    const org = await makeOrganization();
    const file = await png(org);

    const responses = await Promise.all(
      Array.from({ length: 10 }, () => fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [file.fileId] })),
    );

    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(400)]);
    for (const refused of responses.filter((response) => response.status === 400))
      expect(refused.body.type).toBe('urn:review-board:problem:file-already-used');
    const list = await call('GET', '/markups', { key: org.workspaceKey });
    expect(list.body.data.data).toHaveLength(1);
    expect(await usedThisMonth(org.workspaceKey)).toBe(1);
  });
});

describe('POST /markups/file (multipart, whole request at most 20 MB)', () => {
  it('stores the file and makes the markup as from-files does, serving the exact bytes', async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes(6, 4);

    const response = await postFileMarkup(org.workspaceKey, fileForm(bytes, 'Checkout.png', 'image/png'), { workspaceId: org.workspaceId });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const markup = response.body.data;
    expect(markup).toMatchObject({ type: 'image', name: 'Checkout', isReady: true });
    expect(markup.images).toEqual([expect.objectContaining({ mimeType: 'image/png', filesize: bytes.length, width: 6, height: 4 })]);
    expect(Buffer.from(await (await fetch(markup.images[0].url)).arrayBuffer())).toEqual(bytes);
    expect(await readUploadRecord(markup.images[0].id)).toMatchObject({
      state: 'consumed',
      consumedBy: markup.id,
      resourceType: 'markup_asset',
    });
    expect(await getStorageBreakdown(org.organizationId)).toMatchObject({ images: bytes.length });
    expect((await listEvents(org.workspaceId)).map((event) => event.markupId)).toContain(markup.id);
  });

  it('makes a PDF into a pending pdf markup, named by the query', async () => {
    const org = await makeOrganization();

    const response = await postFileMarkup(org.workspaceKey, fileForm(pdfBytes(), 'spec.pdf', 'application/pdf'), {
      workspaceId: org.workspaceId,
      name: 'Spec v1',
    });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ type: 'pdf', name: 'Spec v1', isReady: false, conversionStatus: 'pending' });
  });

  it('answers 415 for a JSON body, 400 without a file field or for an unsupported type, 400 to an organization key without workspaceId', async () => {
    const org = await makeOrganization();

    const json = await postFileMarkup(org.workspaceKey, '{}', { workspaceId: org.workspaceId }, { 'Content-Type': 'application/json' });
    const noFile = await postFileMarkup(
      org.workspaceKey,
      (() => {
        const form = new FormData();
        form.append('name', 'x');
        return form;
      })(),
      { workspaceId: org.workspaceId },
    );
    const text = await postFileMarkup(org.workspaceKey, fileForm(Buffer.from('hello'), 'notes.txt', 'text/plain'), {
      workspaceId: org.workspaceId,
    });
    const noWorkspace = await postFileMarkup(org.orgKey, fileForm(await pngBytes(), 'a.png', 'image/png'), {});

    expect(json.status).toBe(415);
    expect(noFile.status).toBe(400);
    expect(text.status).toBe(400);
    expect(text.body.type).toBe('urn:review-board:problem:unsupported-file-type');
    expect(noWorkspace.status).toBe(400);
    expect(noWorkspace.body.type).toBe('urn:review-board:problem:workspace-id-required');
  });

  it('answers 413 for a request above 20 MB', async () => {
    const org = await makeOrganization();

    const response = await postFileMarkup(org.workspaceKey, fileForm(Buffer.alloc(20 * 1024 * 1024 + 1), 'huge.png', 'image/png'), {
      workspaceId: org.workspaceId,
    });

    expect(response.status).toBe(413);
  });

  it('answers 402 when the file does not fit the remaining storage, storing nothing', async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes();
    await setPlan(org.organizationId, { storageLimitBytes: bytes.length - 1 });

    const response = await postFileMarkup(org.workspaceKey, fileForm(bytes, 'a.png', 'image/png'), { workspaceId: org.workspaceId });

    expect(response.status).toBe(402);
    expect((await getStorageBreakdown(org.organizationId)).total).toBe(0);
  });
});

describe('Reading file markups (Markups rules 7 and 8)', () => {
  async function mixedWorkspace() {
    const org = await makeOrganization();
    const image = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [(await png(org)).fileId] });
    const pdf = await fromFiles(org.workspaceKey, {
      workspaceId: org.workspaceId,
      fileIds: [(await uploadFile(org.workspaceKey, { bytes: pdfBytes(), filename: 'a.pdf', contentType: 'application/pdf' })).fileId],
    });
    expect(image.status).toBe(200);
    expect(pdf.status).toBe(200);
    return { org, imageId: image.body.data.id as string, pdfId: pdf.body.data.id as string };
  }

  it('lists and searches metadata only without include: no images, but isReady and the conversion state', async () => {
    const { org, imageId, pdfId } = await mixedWorkspace();

    const list = await call('GET', '/markups', { key: org.workspaceKey });
    const search = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: '' } });

    for (const page of [list, search]) {
      expect(page.status).toBe(200);
      const byId = new Map(page.body.data.data.map((markup: { id: string }) => [markup.id, markup]));
      expect(byId.get(imageId)).not.toHaveProperty('images');
      expect(byId.get(imageId)).toMatchObject({ isReady: true });
      // The conversion worker may have finished meanwhile; either way the list carries no document.
      expect(byId.get(pdfId)).toHaveProperty('isReady');
      expect(byId.get(pdfId)).toHaveProperty('conversionStatus');
      expect(byId.get(pdfId)).not.toHaveProperty('document');
    }
  });

  it('expands images only on image markups with include=images, and none with include=videos', async () => {
    const { org, imageId, pdfId } = await mixedWorkspace();

    const images = await call('GET', '/markups', { key: org.workspaceKey, query: { include: 'images', ttl: 60 } });
    const videos = await call('GET', '/markups/search', { key: org.workspaceKey, query: { include: 'videos' } });
    const media = await call('GET', '/markups', { key: org.workspaceKey, query: { include: 'media' } });

    const find = (response: typeof images, id: string) => response.body.data.data.find((markup: { id: string }) => markup.id === id);
    expect(find(images, imageId).images).toHaveLength(1);
    expect(new URL(find(images, imageId).images[0].url).searchParams.get('X-Amz-Expires')).toBe('60');
    expect(find(images, pdfId)).not.toHaveProperty('images');
    expect(find(videos, imageId)).not.toHaveProperty('images');
    expect(find(media, imageId).images).toHaveLength(1);
  });

  it('always includes the files on GET /markups/{id} and GET /items/{id}', async () => {
    const { org, imageId } = await mixedWorkspace();

    const markup = await call('GET', `/markups/${imageId}`, { key: org.workspaceKey });
    const item = await call('GET', `/items/${imageId}`, { key: org.workspaceKey });

    expect(markup.body.data.images).toHaveLength(1);
    expect(item.body.data.images).toHaveLength(1);
  });
});

describe('Reading converted files: document and video expansions (Markups rule 7)', () => {
  /** A PDF and a video markup as the conversion worker leaves them, with their outputs in the bucket. */
  async function convertedMarkups(org: Org) {
    localStack();
    const workspace = (await getWorkspace(org.workspaceId))!;
    const parent = (await getItem(workspace.rootFolderId)) as FolderRecord;
    const page = await pngBytes(20, 10);
    const poster = await jpegBytes(16, 9);
    const mp4 = videoBytes(128);
    const stored = async (name: string, bytes: Buffer, mimeType: string) => {
      const key = `converted/${randomUUID()}/${name}`;
      await putObject(key, bytes, mimeType);
      return { key, mimeType, filesize: bytes.length, filename: name };
    };
    const source = (name: string, mimeType: string) => ({
      fileId: randomUUID(),
      key: `uploads/${org.workspaceId}/${randomUUID()}/${name}`,
      filename: name,
      mimeType,
      filesize: 1,
    });
    const pdf = {
      ...newFileMarkupRecord({
        placement: { workspace, parent },
        files: [{ ...source('a.pdf', 'application/pdf'), kind: 'pdf' }],
        createdBy: 'u',
        at: Date.now(),
      }),
      isReady: true,
      conversionStatus: 'ready' as const,
      document: {
        pageCount: 2,
        pages: [
          { number: 1, width: 200, height: 100, image: await stored('p1.png', page, 'image/png') },
          { number: 2, width: 200, height: 100 },
        ],
      },
    };
    const video = {
      ...newFileMarkupRecord({
        placement: { workspace, parent },
        files: [{ ...source('a.mov', 'video/quicktime'), kind: 'video' }],
        createdBy: 'u',
        at: Date.now() + 1,
      }),
      isReady: true,
      conversionStatus: 'ready' as const,
      video: {
        file: await stored('v.mp4', mp4, 'video/mp4'),
        durationSeconds: 1.5,
        width: 16,
        height: 9,
        poster: await stored('poster.jpg', poster, 'image/jpeg'),
      },
    };
    await transact([putNew(toItem(pdf)), putNew(toItem(video))]);
    return { pdfId: pdf.id, videoId: video.id, page, poster, mp4 };
  }

  const bytesAt = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

  it('expands document pages and the video with URLs serving their bytes; the first page and the poster are the thumbnails', async () => {
    const org = await makeOrganization();
    const { pdfId, videoId, page, poster, mp4 } = await convertedMarkups(org);

    const pdf = (await call('GET', `/markups/${pdfId}`, { key: org.workspaceKey })).body.data;
    const video = (await call('GET', `/markups/${videoId}`, { key: org.workspaceKey })).body.data;

    expect(pdf.document).toMatchObject({
      pageCount: 2,
      pages: [
        { number: 1, width: 200, height: 100, image: { mimeType: 'image/png', filesize: page.length } },
        { number: 2, width: 200, height: 100 },
      ],
    });
    expect(pdf.document.pages[1]).not.toHaveProperty('image');
    expect(await bytesAt(pdf.document.pages[0].image.url)).toEqual(page);
    expect(await bytesAt(pdf.thumbnailUrl)).toEqual(page);
    expect(video.video).toMatchObject({ mimeType: 'video/mp4', filesize: mp4.length, durationSeconds: 1.5, width: 16, height: 9 });
    expect(await bytesAt(video.video.url)).toEqual(mp4);
    expect(await bytesAt(video.video.posterUrl)).toEqual(poster);
    expect(await bytesAt(video.thumbnailUrl)).toEqual(poster);
  });

  it('expands each type only with its own include value', async () => {
    const org = await makeOrganization();
    const { pdfId, videoId } = await convertedMarkups(org);
    const read = async (include?: string) => {
      const response = await call('GET', '/markups', { key: org.workspaceKey, query: { include } });
      return new Map(response.body.data.data.map((markup: { id: string }) => [markup.id, markup])) as Map<string, Record<string, unknown>>;
    };

    const [none, documents, videos, media] = await Promise.all([read(), read('documents'), read('videos'), read('images,media')]);

    expect(none.get(pdfId)).not.toHaveProperty('document');
    expect(none.get(videoId)).not.toHaveProperty('video');
    expect(documents.get(pdfId)).toHaveProperty('document');
    expect(documents.get(videoId)).not.toHaveProperty('video');
    expect(videos.get(videoId)).toHaveProperty('video');
    expect(videos.get(pdfId)).not.toHaveProperty('document');
    expect(media.get(pdfId)).toHaveProperty('document');
    expect(media.get(videoId)).toHaveProperty('video');
  });
});
