import { open } from 'node:fs/promises';
import { describeFailure } from '../errors.js';
import { ConversionError } from './errors.js';
import { loadSharp } from './packages.js';

/** One picture a converter produced: a page of a document, a poster frame, a thumbnail. */
export interface RenderedImage {
  data: Buffer;
  mimeType: 'image/png' | 'image/jpeg';
  /** Pixels. */
  width: number;
  height: number;
}

/** What a converter reads: a file on disk (preferred for large inputs) or the bytes themselves. */
export type ConverterInput = string | Buffer;

/**
 * The longest side of a page image. Larger sources are scaled down to it: browsers and canvases
 * struggle beyond it, and a 30000-pixel-wide page image would not fit a worker's memory.
 */
export const MAX_PAGE_DIMENSION = 8192;

/** Thumbnails are this wide (the webpage thumbnails are 640 px wide too) and at most twice as tall. */
export const THUMBNAIL_WIDTH = 640;
const THUMBNAIL_MAX_HEIGHT = 2 * THUMBNAIL_WIDTH;

export type SourceKind = 'tiff' | 'psd' | 'eps' | 'pdf' | 'raster';

/**
 * What a file is, from its first bytes; undefined when nothing matches. Magic numbers win over the
 * declared mime type, which comes from the uploader's browser.
 */
export function sniffKind(head: Uint8Array): SourceKind | undefined {
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const ascii = bytes.subarray(0, 16).toString('latin1');
  if (ascii.startsWith('II*\0') || ascii.startsWith('MM\0*') || ascii.startsWith('II+\0') || ascii.startsWith('MM\0+')) return 'tiff';
  if (ascii.startsWith('8BPS')) return 'psd';
  if (ascii.startsWith('%!PS')) return 'eps';
  // DOS EPS binary header (PostScript plus a TIFF or WMF preview).
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0xc5d0d3c6) return 'eps';
  if (bytes.subarray(0, 1024).includes('%PDF-')) return 'pdf';
  if (
    ascii.startsWith('\x89PNG') ||
    ascii.startsWith('\xff\xd8\xff') ||
    ascii.startsWith('GIF8') ||
    (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP')
  )
    return 'raster';
  return undefined;
}

const KIND_BY_MIME_TYPE: Record<string, SourceKind> = {
  'image/tiff': 'tiff',
  'image/tif': 'tiff',
  'image/x-tiff': 'tiff',
  'image/vnd.adobe.photoshop': 'psd',
  'image/psd': 'psd',
  'image/x-psd': 'psd',
  'image/photoshop': 'psd',
  'image/x-photoshop': 'psd',
  'application/photoshop': 'psd',
  'application/x-photoshop': 'psd',
  'application/psd': 'psd',
  'application/postscript': 'eps',
  'application/eps': 'eps',
  'application/x-eps': 'eps',
  'image/eps': 'eps',
  'image/x-eps': 'eps',
  'application/pdf': 'pdf',
};

/** The kind of an uploaded file: sniffed from its first bytes, else from its declared mime type. */
export function sourceKind(head: Uint8Array, mimeType: string | undefined): SourceKind | undefined {
  const declared = mimeType?.toLowerCase().split(';')[0]!.trim();
  // Own entries only: `constructor` names no kind.
  return (
    sniffKind(head) ?? (declared !== undefined && Object.hasOwn(KIND_BY_MIME_TYPE, declared) ? KIND_BY_MIME_TYPE[declared] : undefined)
  );
}

/** The first `length` bytes of an input, for sniffing. */
export async function readHead(input: ConverterInput, length = 1024): Promise<Buffer> {
  if (typeof input !== 'string') return input.subarray(0, length);
  const file = await open(input, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await file.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * A thumbnail of the first page or the poster: THUMBNAIL_WIDTH wide (small pictures are enlarged so
 * every thumbnail has the same width), the height following the aspect ratio up to twice the width;
 * taller pictures keep their top.
 */
export async function makeThumbnail(image: Buffer): Promise<RenderedImage> {
  const sharp = loadSharp();
  try {
    const { width = 1, height = 1 } = await sharp(image).metadata();
    const scaledHeight = Math.max(1, Math.round((THUMBNAIL_WIDTH * height) / width));
    const { data, info } = await sharp(image)
      .resize(THUMBNAIL_WIDTH, Math.min(scaledHeight, THUMBNAIL_MAX_HEIGHT), { fit: 'cover', position: 'top' })
      .png()
      .toBuffer({ resolveWithObject: true });
    return { data, mimeType: 'image/png', width: info.width, height: info.height };
  } catch (error) {
    throw new ConversionError(`The thumbnail could not be made: ${describeFailure(error)}`, { cause: error });
  }
}

/** Scale factor that fits `width` x `height` into `maxDimension` on its longest side (never enlarges). */
export function fitScale(width: number, height: number, maxDimension = MAX_PAGE_DIMENSION): number {
  const longest = Math.max(width, height);
  return longest > maxDimension ? maxDimension / longest : 1;
}

/** Scales a PNG down to `maxDimension` on its longest side (left alone when it already fits). */
export async function fitPng(image: RenderedImage, maxDimension = MAX_PAGE_DIMENSION): Promise<RenderedImage> {
  if (fitScale(image.width, image.height, maxDimension) === 1) return image;
  const { data, info } = await loadSharp()(image.data, { limitInputPixels: false })
    .resize(maxDimension, maxDimension, { fit: 'inside' })
    .png()
    .toBuffer({ resolveWithObject: true });
  return { data, mimeType: 'image/png', width: info.width, height: info.height };
}
