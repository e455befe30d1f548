import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { markupsRoutes } from '../../functions/markups/routes.js';
import type { FolderRecord } from '../../shared/db/items.js';
import type { WorkspaceRecord } from '../../shared/db/workspaces.js';
import { defaultNameOf, markupTypeOf, newFileMarkupRecord, type SourceFile } from '../../shared/domain/markups/file-markup-records.js';
import { objectNameOf, storageCategoryOf } from '../../shared/domain/uploads/rules.js';
import { createApiHandler } from '../../shared/http/api-handler.js';
import { buildOpenApi } from '../../shared/http/openapi.js';
import { ok, operation, routeTable } from '../../shared/http/route.js';
import { fileTypeOf, isDisplayableImage } from '../../shared/storage/file-types.js';
import { fileTypeOfUrl } from '../../shared/domain/markups/create.js';
import { imageSize, readImageAs } from '../../shared/storage/image-size.js';

const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 9, g: 99, b: 199 } } });

function file(overrides: Partial<SourceFile> = {}): SourceFile {
  return { fileId: 'f1', key: 'uploads/w/f1/a.png', filename: 'a.png', mimeType: 'image/png', filesize: 10, kind: 'image', ...overrides };
}

describe('image sizes are read from file headers', () => {
  it.each([
    ['PNG', () => solid(17, 9).png().toBuffer()],
    ['JPEG', () => solid(17, 9).jpeg().toBuffer()],
    ['GIF', () => solid(17, 9).gif().toBuffer()],
    ['lossy WebP', () => solid(17, 9).webp().toBuffer()],
    ['lossless WebP', () => solid(17, 9).webp({ lossless: true }).toBuffer()],
  ])('reads %s', async (_format, make) => {
    expect(imageSize(await make())).toEqual({ width: 17, height: 9 });
  });

  it('reads WebP with an alpha channel (the extended VP8X header)', async () => {
    const webp = await sharp({ create: { width: 300, height: 2, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0.5 } } })
      .webp()
      .toBuffer();

    expect(imageSize(webp)).toEqual({ width: 300, height: 2 });
  });

  it('swaps width and height of a JPEG whose EXIF orientation turns it a quarter', async () => {
    const rotated = await solid(20, 10).jpeg().withMetadata({ orientation: 6 }).toBuffer();

    expect(imageSize(rotated)).toEqual({ width: 10, height: 20 });
  });

  it('reads a BMP (top-down and bottom-up) and an SVG by its attributes or viewBox', () => {
    const bmp = Buffer.alloc(54);
    bmp.write('BM', 0, 'latin1');
    bmp.writeUInt32LE(40, 14);
    bmp.writeInt32LE(33, 18);
    bmp.writeInt32LE(-21, 22);

    expect(imageSize(bmp)).toEqual({ width: 33, height: 21 });
    expect(imageSize(Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="120px" height="80"></svg>'))).toEqual(
      { width: 120, height: 80 },
    );
    expect(imageSize(Buffer.from('<svg viewBox="0 0 64.4 32" width="100%"></svg>'))).toEqual({ width: 64, height: 32 });
  });

  it('answers undefined for truncated headers and other files, never throwing', async () => {
    const png = await solid(5, 5).png().toBuffer();

    expect(imageSize(png.subarray(0, 18))).toBeUndefined();
    expect(imageSize(Buffer.from('%PDF-1.4'))).toBeUndefined();
    expect(imageSize(Buffer.from([0xff, 0xd8, 0xff, 0xe1, 0xff]))).toBeUndefined();
    expect(imageSize(Buffer.alloc(0))).toBeUndefined();
  });
});

describe('readImageAs: bytes decode only as the image type they claim (DESIGN.md: bytes that are not what they claim)', () => {
  it('reads each displayable type as itself, with its size', async () => {
    expect(readImageAs(await solid(7, 3).png().toBuffer(), 'image/png')).toEqual({ size: { width: 7, height: 3 } });
    expect(readImageAs(await solid(7, 3).jpeg().toBuffer(), 'image/jpeg')).toEqual({ size: { width: 7, height: 3 } });
    expect(readImageAs(await solid(7, 3).gif().toBuffer(), 'image/gif')).toEqual({ size: { width: 7, height: 3 } });
    expect(readImageAs(await solid(7, 3).webp().toBuffer(), 'image/webp')).toEqual({ size: { width: 7, height: 3 } });
  });

  it('refuses another type behind the declared one, random bytes, and text that is no SVG', async () => {
    expect(readImageAs(await solid(7, 3).jpeg().toBuffer(), 'image/png')).toBeUndefined();
    expect(readImageAs(await solid(7, 3).png().toBuffer(), 'image/gif')).toBeUndefined();
    expect(readImageAs(Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 97 + 13) % 256)), 'image/png')).toBeUndefined();
    expect(readImageAs(Buffer.from('not an svg'), 'image/svg+xml')).toBeUndefined();
    expect(readImageAs(Buffer.alloc(0), 'image/webp')).toBeUndefined();
  });

  it('takes an SVG without a size as an image whose size its viewer decides', () => {
    expect(readImageAs(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>'), 'image/svg+xml')).toEqual(
      { size: undefined },
    );
    expect(readImageAs(Buffer.from('<svg width="12" height="8"></svg>'), 'image/svg+xml')).toEqual({ size: { width: 12, height: 8 } });
  });
});

describe('file types decide the markup (Markups rules 3 and 4)', () => {
  it.each([
    ['image/png', 'a.png', 'image'],
    ['IMAGE/JPEG; charset=binary', 'a', 'image'],
    ['image/svg+xml', 'a.svg', 'image'],
    ['application/pdf', 'a.bin', 'pdf'],
    ['video/quicktime', 'a.mov', 'video'],
    ['application/mxf', 'a.mxf', 'video'],
    ['image/tiff', 'a.tif', 'convertible-image'],
    ['image/vnd.adobe.photoshop', 'a.psd', 'convertible-image'],
    ['application/postscript', 'a.eps', 'convertible-image'],
    ['application/octet-stream', 'clip.MKV', 'video'],
    ['binary/octet-stream', 'scan.psd', 'convertible-image'],
  ])('%s named %s is a %s file', (contentType, filename, kind) => {
    expect(fileTypeOf(contentType, filename)?.kind).toBe(kind);
  });

  it('knows nothing of other files', () => {
    expect(fileTypeOf('text/plain', 'notes.txt')).toBeUndefined();
    expect(fileTypeOf('application/zip', 'archive')).toBeUndefined();
  });

  it('makes any number of images one image markup', () => {
    expect(markupTypeOf([file(), file({ fileId: 'f2' })])).toBe('image');
  });

  it.each([
    ['pdf', 'pdf'],
    ['video', 'video'],
    ['convertible-image', 'image'],
  ] as const)('makes one %s file a %s markup', (kind, type) => {
    expect(markupTypeOf([file({ kind })])).toBe(type);
  });

  it('refuses a converted file mixed with images, and several converted files', () => {
    expect(() => markupTypeOf([file(), file({ fileId: 'f2', kind: 'pdf' })])).toThrow(
      expect.objectContaining({ status: 400, slug: 'files-mixed' }),
    );
    expect(() => markupTypeOf([file({ kind: 'video' }), file({ fileId: 'f2', kind: 'pdf' })])).toThrow(
      expect.objectContaining({ status: 400, slug: 'several-converted-files' }),
    );
  });
});

describe('file types are known types only', () => {
  it("takes no name of an object's own machinery for a type or an extension", () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      expect(fileTypeOf(name, 'file'), name).toBeUndefined();
      expect(fileTypeOf('application/x-unknown', `file.${name.toLowerCase()}`), name).toBeUndefined();
      expect(isDisplayableImage(name, `file.${name.toLowerCase()}`), name).toBe(false);
      expect(fileTypeOfUrl(`https://example.com/file.${name.toLowerCase()}`), name).toBeUndefined();
    }
  });

  it('lets a displayable image be named by its file only when its type says nothing or is an image type', () => {
    expect(isDisplayableImage('text/html', 'a.png')).toBe(false);
    expect(isDisplayableImage('application/javascript', 'a.png')).toBe(false);
    expect(isDisplayableImage('application/octet-stream', 'a.png')).toBe(true);
    expect(isDisplayableImage('', 'a.webp')).toBe(true);
    expect(isDisplayableImage('image/jpg', 'a.jpg')).toBe(true);
    expect(isDisplayableImage('image/png; charset=binary', 'a')).toBe(true);
    expect(isDisplayableImage('application/pdf', 'a.png')).toBe(false);
  });
});

describe('new file markup records', () => {
  const workspace = { id: 'ws', organizationId: 'org' } as WorkspaceRecord;
  const parent = { id: 'root' } as FolderRecord;

  it('shows images as uploaded, ready, with the file ids as page ids', () => {
    const record = newFileMarkupRecord({
      placement: { workspace, parent },
      files: [file({ width: 3, height: 2 }), file({ fileId: 'f2', filename: 'b.png' })],
      createdBy: 'u',
      at: 1,
    });

    expect(record).toMatchObject({ type: 'image', name: 'a', isReady: true, parentFolderId: 'root', workspaceId: 'ws' });
    expect(record.images).toEqual([
      { id: 'f1', key: 'uploads/w/f1/a.png', mimeType: 'image/png', filesize: 10, filename: 'a.png', width: 3, height: 2 },
      { id: 'f2', key: 'uploads/w/f1/a.png', mimeType: 'image/png', filesize: 10, filename: 'b.png' },
    ]);
    expect(record.source).toBeUndefined();
    expect(record.conversionStatus).toBeUndefined();
  });

  it('waits for conversion of a PSD: no images yet, its source and original type kept', () => {
    const psd = file({ kind: 'convertible-image', mimeType: 'image/vnd.adobe.photoshop', filename: 'design.psd' });

    const record = newFileMarkupRecord({ placement: { workspace, parent }, files: [psd], name: 'Design', createdBy: 'u', at: 1 });

    expect(record).toMatchObject({
      type: 'image',
      name: 'Design',
      isReady: false,
      conversionStatus: 'pending',
      images: [],
      originalMimeType: 'image/vnd.adobe.photoshop',
    });
    expect(record.source).toEqual({ key: psd.key, mimeType: psd.mimeType, filesize: 10, filename: 'design.psd' });
  });

  it('names markups after the first file without its extension', () => {
    expect(defaultNameOf('Home page.final.png')).toBe('Home page.final');
    expect(defaultNameOf('.png')).toBe('.png');
    expect(defaultNameOf(`${'x'.repeat(300)}.png`)).toHaveLength(200);
  });
});

describe('upload object keys and storage categories', () => {
  it('keeps a file name usable in a key: no separators, control characters or ${, at most 200 characters', () => {
    expect(objectNameOf('a/b\\c\u0001.png')).toBe('a_b_c_.png');
    expect(objectNameOf('${filename}.png')).toBe('_{filename}.png');
    expect(objectNameOf('..')).toBe('file');
    const long = objectNameOf(`${'n'.repeat(300)}.jpeg`);
    expect(long).toHaveLength(200);
    expect(long.endsWith('.jpeg')).toBe(true);
  });

  it('counts bytes by content type, and message attachments as attachments', () => {
    expect(storageCategoryOf('markup_asset', 'application/pdf', 'a.pdf')).toBe('pdfs');
    expect(storageCategoryOf('markup_asset', 'video/webm', 'a.webm')).toBe('videos');
    expect(storageCategoryOf('markup_asset', 'image/tiff', 'a.tiff')).toBe('images');
    expect(storageCategoryOf('markup_asset', 'application/octet-stream', 'a.mov')).toBe('videos');
    expect(storageCategoryOf('message_attachment', 'image/png', 'a.png')).toBe('attachments');
    expect(storageCategoryOf('annotation_export', 'application/zip', 'a.zip')).toBe('attachments');
  });
});

describe('routes with a raw body (POST /markups/file)', () => {
  const sample = JSON.parse(
    readFileSync(new URL('../../events/apigw-http/create-workspace.json', import.meta.url), 'utf8'),
  ) as APIGatewayProxyEventV2;
  const handler = createApiHandler(
    routeTable({
      'POST /api/v2/blobs': operation({
        operationId: 'postBlob',
        summary: '',
        auth: 'none',
        rawBody: { mediaType: 'multipart/form-data', maxBytes: 8 },
        responses: [],
        handle: async ({ rawBody }) => ok({ bytes: [...rawBody!.data], contentType: rawBody!.contentType }),
      }),
    }),
    { allRoutes: [] },
  );
  const post = (body: Buffer, contentType: string): APIGatewayProxyEventV2 => ({
    ...sample,
    routeKey: 'POST /api/v2/blobs',
    rawPath: '/api/v2/blobs',
    headers: { ...sample.headers, 'content-type': contentType },
    body: body.toString('base64'),
    isBase64Encoded: true,
  });
  const send = async (event: APIGatewayProxyEventV2) => (await handler(event, {} as Context)) as APIGatewayProxyStructuredResultV2;

  it('hands the decoded bytes and the content type to the operation, without JSON parsing', async () => {
    const result = await send(post(Buffer.from([0, 255, 10, 13]), 'multipart/form-data; boundary=x'));

    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body!)).toEqual({ data: { bytes: [0, 255, 10, 13], contentType: 'multipart/form-data; boundary=x' } });
  });

  it('answers 415 for another media type and 413 above the limit', async () => {
    const json = await send(post(Buffer.from('{}'), 'application/json'));
    const large = await send(post(Buffer.alloc(9), 'multipart/form-data; boundary=x'));

    expect(json.statusCode).toBe(415);
    expect(large.statusCode).toBe(413);
    expect(JSON.parse(large.body!)).toMatchObject({ type: 'urn:review-board:problem:payload-too-large' });
  });

  it('documents the multipart body in the OpenAPI document', () => {
    const document = buildOpenApi(markupsRoutes.filter((r) => r.operationId === 'createMarkupFromFile')) as {
      paths: Record<string, Record<string, { requestBody: unknown }>>;
    };

    expect(document.paths['/api/v2/markups/file']!.post!.requestBody).toEqual({
      required: true,
      content: {
        'multipart/form-data': {
          schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
        },
      },
    });
  });
});
