import { readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { describeFailure } from '../errors.js';
import { ConversionError } from './errors.js';
import { fitScale, MAX_PAGE_DIMENSION, type ConverterInput, type RenderedImage } from './images.js';
import { CONVERSION_LIMITS } from './limits.js';
import { loadPdfium, loadSharp, type PdfiumModule } from './packages.js';
import { withArticle } from '../english.js';

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
  /** Pages the document has (the same on every page yielded). */
  pageCount: number;
  /** Page size in points (1/72 in) as displayed: the crop box, with the page's rotation applied. */
  width: number;
  height: number;
  image: RenderedImage;
}

export const PDF_SCALE = 1.5;

// From PDFium's fpdfview.h.
const FPDF_ERR_FILE = 2;
const FPDF_ERR_FORMAT = 3;
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5;
/** Render annotations (form fields, stamps, comments with appearance streams). */
const FPDF_ANNOT = 0x01;
/** RGBA rather than PDFium's native BGRA, so the pixels go to sharp as they are. */
const FPDF_REVERSE_BYTE_ORDER = 0x10;
const WHITE = 0xffffffff;

/** PDFium's FPDF_FILEACCESS lengths are C `unsigned long`, 32 bits in WebAssembly. */
const MAX_FILE_BYTES = 0xffffffff;

/**
 * Opens a PDF with PDFium and renders its pages, each with its size in points, one at a time: the
 * next page is rendered only when the caller asks for it, and each page and its bitmap are freed
 * before the next, so a 500-page PDF needs the memory of one page. The document is read through
 * PDFium's FPDF_LoadCustomDocument, which asks for the byte ranges it needs: a file on disk is read
 * with readSync in those pieces, never whole, and a Buffer is not copied into WebAssembly memory.
 * A document over the page limit is refused from its page count, before any page is rendered.
 * Annotations are drawn; pages are rendered on white.
 */
export async function* convertPdf(input: ConverterInput, options: PdfOptions = {}): AsyncGenerator<PdfPage, void, undefined> {
  const pdfium = await loadPdfium();
  const file = typeof input === 'string' ? await open(input, 'r') : undefined;
  let access: FileAccess | undefined;
  let document = 0;
  try {
    let pageCount: number;
    try {
      const size = file ? (await file.stat()).size : (input as Buffer).length;
      if (size > MAX_FILE_BYTES) throw new ConversionError('The PDF is larger than 4 GiB; split it into smaller files.');
      const fd = file?.fd;
      access = openFileAccess(
        pdfium,
        size,
        fd === undefined
          ? (heap, into, length, position) => (input as Buffer).copy(heap, into, position, position + length)
          : (heap, into, length, position) => readSync(fd, heap, into, length, position),
      );
      document = pdfium.FPDF_LoadCustomDocument(access.pointer, '');
      if (!document) {
        const code = pdfium.FPDF_GetLastError();
        if (code === FPDF_ERR_PASSWORD) throw new ConversionError('The PDF is password-protected; upload it without a password.');
        throw new Error(access.failure ? `reading the file failed: ${describeFailure(access.failure)}` : loadErrorText(code));
      }
      pageCount = pdfium.FPDF_GetPageCount(document);
    } catch (error) {
      if (error instanceof ConversionError) throw error;
      throw new ConversionError(`The PDF could not be read: ${describeFailure(error)}`, { cause: error });
    }
    if (pageCount === 0) throw new ConversionError('The PDF has no pages.');
    const maxPages = options.maxPages ?? CONVERSION_LIMITS.maxPages;
    if (pageCount > maxPages)
      throw new ConversionError(`The PDF has ${pageCount} pages; at most ${maxPages} pages are converted. Split it into smaller files.`);
    for (let index = 0; index < pageCount; index += 1) yield { ...(await renderPage(pdfium, document, access, index, options)), pageCount };
  } finally {
    // Closing the document frees its parsed objects and the fonts and images its pages cached.
    if (document) pdfium.FPDF_CloseDocument(document);
    access?.close();
    await file?.close();
  }
}

async function renderPage(
  pdfium: PdfiumModule,
  document: number,
  access: FileAccess,
  index: number,
  options: PdfOptions,
): Promise<Omit<PdfPage, 'pageCount'>> {
  let page = 0;
  let bitmap = 0;
  try {
    let pixels: Buffer;
    let size: { width: number; height: number };
    let pixelWidth: number;
    let pixelHeight: number;
    try {
      page = pdfium.FPDF_LoadPage(document, index);
      if (access.failure) throw new Error(`reading the file failed: ${describeFailure(access.failure)}`);
      if (!page) throw new Error(`PDFium could not load it (error ${pdfium.FPDF_GetLastError()})`);
      // The crop box (within the media box) with the page's /Rotate applied, as displayed.
      size = { width: round2(pdfium.FPDF_GetPageWidthF(page)), height: round2(pdfium.FPDF_GetPageHeightF(page)) };
      const requested = options.scale ?? PDF_SCALE;
      const scale = requested * fitScale(size.width * requested, size.height * requested, options.maxDimension ?? MAX_PAGE_DIMENSION);
      // Rounded up, as mupdf sized its pixmaps (a 595 pt side at 1.5x is 893 px).
      pixelWidth = Math.max(1, Math.ceil(size.width * scale - 0.001));
      pixelHeight = Math.max(1, Math.ceil(size.height * scale - 0.001));
      bitmap = pdfium.FPDFBitmap_Create(pixelWidth, pixelHeight, 1);
      if (!bitmap) throw new Error(`no memory for ${withArticle(pixelWidth)} x ${pixelHeight} bitmap`);
      pdfium.FPDFBitmap_FillRect(bitmap, 0, 0, pixelWidth, pixelHeight, WHITE);
      // Rotation 0: PDFium applies the page's own /Rotate to fit the page into the bitmap.
      pdfium.FPDF_RenderPageBitmap(bitmap, page, 0, 0, pixelWidth, pixelHeight, 0, FPDF_ANNOT | FPDF_REVERSE_BYTE_ORDER);
      // PDFium reads a page's objects as it draws them and leaves out what it could not read.
      if (access.failure) throw new Error(`reading the file failed: ${describeFailure(access.failure)}`);
      const stride = pdfium.FPDFBitmap_GetStride(bitmap);
      const start = pdfium.FPDFBitmap_GetBuffer(bitmap) >>> 0;
      // A copy: the bitmap is freed before sharp encodes, and WebAssembly memory may move when it grows.
      pixels = Buffer.from(pdfium.pdfium.HEAPU8.subarray(start, start + stride * pixelHeight));
    } finally {
      if (bitmap) pdfium.FPDFBitmap_Destroy(bitmap);
      if (page) pdfium.FPDF_ClosePage(page);
    }
    const encoder = loadSharp()(pixels, { raw: { width: pixelWidth, height: pixelHeight, channels: 4 } }).removeAlpha();
    const jpeg = options.format === 'jpeg';
    const { data, info } = await (jpeg ? encoder.jpeg({ quality: options.quality ?? 85 }) : encoder.png()).toBuffer({
      resolveWithObject: true,
    });
    const image: RenderedImage = { data, mimeType: jpeg ? 'image/jpeg' : 'image/png', width: info.width, height: info.height };
    return { number: index + 1, ...size, image };
  } catch (error) {
    throw new ConversionError(`Page ${index + 1} of the PDF could not be rendered: ${describeFailure(error)}`, { cause: error });
  }
}

interface FileAccess {
  /** Address of the FPDF_FILEACCESS struct PDFium reads the document through. */
  pointer: number;
  /** What the last read threw, if it did (PDFium only learns that the read failed). */
  failure?: unknown;
  close(): void;
}

/** Copies `length` bytes of the document at `position` into `heap` at `into`; returns how many it copied. */
type ReadBlock = (heap: Uint8Array, into: number, length: number, position: number) => number;

/**
 * The documents open in this process, by the m_Param of their FPDF_FILEACCESS: one m_GetBlock
 * function is added to the WebAssembly table per module and finds the reader by it, rather than a
 * function per document (a table entry per open document, left behind should a close be missed).
 */
const readers = new Map<number, { read: ReadBlock; access: FileAccess }>();
const getBlockFunctions = new WeakMap<PdfiumModule, number>();
let nextReader = 1;

function openFileAccess(pdfium: PdfiumModule, size: number, read: ReadBlock): FileAccess {
  const module = pdfium.pdfium;
  let getBlock = getBlockFunctions.get(pdfium);
  if (getBlock === undefined) {
    // int m_GetBlock(void* param, unsigned long position, unsigned char* pBuf, unsigned long size): non-zero on success.
    getBlock = module.addFunction((param: number, position: number, into: number, length: number): number => {
      const reader = readers.get(param);
      if (!reader) return 0;
      try {
        const heap = module.HEAPU8;
        let done = 0;
        while (done < length >>> 0) {
          const count = reader.read(heap, (into >>> 0) + done, (length >>> 0) - done, (position >>> 0) + done);
          if (count <= 0) return 0;
          done += count;
        }
        return 1;
      } catch (error) {
        reader.access.failure = error;
        return 0;
      }
    }, 'iiiii');
    getBlockFunctions.set(pdfium, getBlock);
  }
  const id = nextReader;
  nextReader = nextReader >= 0x7fffffff ? 1 : nextReader + 1;
  // struct FPDF_FILEACCESS { unsigned long m_FileLen; int (*m_GetBlock)(...); void* m_Param; }: three 32-bit fields.
  const pointer = module.wasmExports.malloc(12);
  if (!pointer) throw new Error('no memory to open the file');
  module.setValue(pointer, size, 'i32');
  module.setValue(pointer + 4, getBlock, 'i32');
  module.setValue(pointer + 8, id, 'i32');
  const access: FileAccess = {
    pointer,
    close: () => {
      readers.delete(id);
      module.wasmExports.free(pointer);
    },
  };
  readers.set(id, { read, access });
  return access;
}

function loadErrorText(code: number): string {
  switch (code) {
    case FPDF_ERR_FILE:
      return 'the file could not be opened (PDFium error 2)';
    case FPDF_ERR_FORMAT:
      return 'not a PDF, or a damaged one (PDFium error 3)';
    case FPDF_ERR_SECURITY:
      return 'unsupported security handler (PDFium error 5)';
    default:
      return `PDFium error ${code}`;
  }
}

const round2 = (value: number) => Math.round(value * 100) / 100;
