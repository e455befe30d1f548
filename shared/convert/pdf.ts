import { readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { ConversionError, describeFailure } from './errors.js';
import { fitScale, MAX_PAGE_DIMENSION, type ConverterInput, type RenderedImage } from './images.js';
import { CONVERSION_LIMITS } from './limits.js';
import { loadMupdf, type MupdfModule } from './packages.js';

export interface PdfOptions {
  /** Pixels per point of the page images (1.5: a Letter page becomes 918 x 1188 px). */
  scale?: number;
  /** Longest side of a page image; large-format pages are rendered at a lower scale. */
  maxDimension?: number;
  format?: 'png' | 'jpeg';
  /** JPEG quality (1..100). */
  quality?: number;
  /** More pages than this fail the whole document before any page is rendered. */
  maxPages?: number;
}

export interface PdfPage {
  /** 1-based. */
  number: number;
  /** Page size in points (1/72 in) as displayed: the crop box, with the page's rotation applied. */
  width: number;
  height: number;
  image: RenderedImage;
}

export const PDF_SCALE = 1.5;

/**
 * Opens a PDF and renders its pages, each with its size in points, one at a time: the next page is
 * rendered only when the caller asks for it, and each page's pixmap is freed before the next, so a
 * 500-page PDF needs the memory of one page. A file on disk is read through a stream, never whole.
 * A document over the page limit is refused from its page count, before any page is rendered.
 * Annotations are drawn; pages are rendered on white.
 */
export async function* convertPdf(input: ConverterInput, options: PdfOptions = {}): AsyncGenerator<PdfPage, void, undefined> {
  const mupdf = await loadMupdf();
  const file = typeof input === 'string' ? await open(input, 'r') : undefined;
  let stream: InstanceType<MupdfModule['Stream']> | undefined;
  let document: InstanceType<MupdfModule['Document']> | undefined;
  try {
    let pageCount: number;
    try {
      if (file) {
        const size = (await file.stat()).size;
        stream = new mupdf.Stream({
          fileSize: () => size,
          // mupdf reads synchronously from WASM; readSync fills its memory in place.
          read: (memory: Uint8Array, offset: number, length: number, position: number) => readSync(file.fd, memory, offset, length, position),
          close: () => undefined,
        });
      }
      document = mupdf.Document.openDocument(stream ?? (input as Buffer), 'application/pdf');
      if (document.needsPassword()) throw new ConversionError('The PDF is password-protected; upload it without a password.');
      pageCount = document.countPages();
    } catch (error) {
      if (error instanceof ConversionError) throw error;
      throw new ConversionError(`The PDF could not be read: ${describeFailure(error)}`, { cause: error });
    }
    if (pageCount === 0) throw new ConversionError('The PDF has no pages.');
    const maxPages = options.maxPages ?? CONVERSION_LIMITS.maxPages;
    if (pageCount > maxPages) throw new ConversionError(`The PDF has ${pageCount} pages; at most ${maxPages} pages are converted. Split it into smaller files.`);
    for (let index = 0; index < pageCount; index += 1) yield renderPage(mupdf, document, index, options);
  } finally {
    document?.destroy();
    stream?.destroy();
    // Fonts and images the document's pages cached; a warm worker should not keep them for the next job.
    mupdf.emptyStore();
    await file?.close();
  }
}

function renderPage(mupdf: MupdfModule, document: InstanceType<MupdfModule['Document']>, index: number, options: PdfOptions): PdfPage {
  let page: ReturnType<InstanceType<MupdfModule['Document']>['loadPage']> | undefined;
  let pixmap: InstanceType<MupdfModule['Pixmap']> | undefined;
  try {
    page = document.loadPage(index);
    const { width, height } = sizeOf(page.getBounds());
    const requested = options.scale ?? PDF_SCALE;
    const scale = requested * fitScale(width * requested, height * requested, options.maxDimension ?? MAX_PAGE_DIMENSION);
    pixmap = page.toPixmap(mupdf.Matrix.scale(scale, scale), mupdf.ColorSpace.DeviceRGB, false, true);
    const jpeg = options.format === 'jpeg';
    const data = Buffer.from(jpeg ? pixmap.asJPEG(options.quality ?? 85) : pixmap.asPNG());
    const image: RenderedImage = { data, mimeType: jpeg ? 'image/jpeg' : 'image/png', width: pixmap.getWidth(), height: pixmap.getHeight() };
    return { number: index + 1, width, height, image };
  } catch (error) {
    throw new ConversionError(`Page ${index + 1} of the PDF could not be rendered: ${describeFailure(error)}`, { cause: error });
  } finally {
    pixmap?.destroy();
    page?.destroy();
  }
}

const sizeOf = ([x0, y0, x1, y1]: readonly number[]) => ({ width: round2(x1! - x0!), height: round2(y1! - y0!) });
const round2 = (value: number) => Math.round(value * 100) / 100;
