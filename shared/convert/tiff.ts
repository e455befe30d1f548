import { describeFailure } from '../errors.js';
import { ConversionError } from './errors.js';
import { MAX_PAGE_DIMENSION, type ConverterInput, type RenderedImage } from './images.js';
import { checkImagePixels, CONVERSION_LIMITS } from './limits.js';
import { loadSharp } from './packages.js';

const RASTER_FORMATS = new Set(['tiff', 'png', 'jpeg', 'gif', 'webp']);

export interface RasterOptions {
  /** Longest side of a page image; larger pages are scaled down. */
  maxDimension?: number;
  /** A page larger than this is refused before it is decoded. */
  maxPixels?: number;
  /** More pages than this fail the file before any page is decoded. */
  maxPages?: number;
}

/**
 * The pages of a TIFF (every page of a multi-page TIFF, each at its own size), or of a PNG, JPEG,
 * GIF or WebP mislabelled as one, as sRGB PNGs, one at a time so only one page is held in memory.
 * EXIF orientation is applied; CMYK and 16-bit pages become 8-bit sRGB; alpha is kept. The page
 * count and each page's pixel size are checked against the conversion limits from the file's
 * header, before the file or that page is decoded.
 */
export async function* convertTiff(input: ConverterInput, options: RasterOptions = {}): AsyncGenerator<RenderedImage, void, undefined> {
  const sharp = loadSharp();
  const maxDimension = options.maxDimension ?? MAX_PAGE_DIMENSION;
  const maxPixels = options.maxPixels ?? CONVERSION_LIMITS.maxImagePixels;
  const maxPages = options.maxPages ?? CONVERSION_LIMITS.maxPages;
  let pages: number;
  let format: string;
  try {
    const metadata = await sharp(input, { failOn: 'error' }).metadata();
    pages = metadata.pages ?? 1;
    format = metadata.format;
  } catch (error) {
    throw new ConversionError(`The image could not be read: ${describeFailure(error)}`, { cause: error });
  }
  // Not SVG, PDF or other formats libvips happens to read: a file labelled TIFF may be anything.
  if (!RASTER_FORMATS.has(format)) throw new ConversionError(`The file is not a TIFF image (it is ${format.toUpperCase()}).`);
  if (pages > maxPages)
    throw new ConversionError(`The image has ${pages} pages; at most ${maxPages} pages are converted. Split it into smaller files.`);
  for (let page = 0; page < pages; page += 1) {
    checkImagePixels(...(await pageSize(input, page)), maxPixels);
    let rendered: RenderedImage;
    try {
      const { data, info } = await sharp(input, { page, failOn: 'error', limitInputPixels: maxPixels })
        .autoOrient()
        .resize(maxDimension, maxDimension, { fit: 'inside', withoutEnlargement: true })
        .toColourspace('srgb')
        .png()
        .toBuffer({ resolveWithObject: true });
      rendered = { data, mimeType: 'image/png', width: info.width, height: info.height };
    } catch (error) {
      throw new ConversionError(`Page ${page + 1} of the image could not be read: ${describeFailure(error)}`, { cause: error });
    }
    yield rendered;
  }
}

/** A page's pixel size as its header declares it (nothing is decoded). */
async function pageSize(input: ConverterInput, page: number): Promise<[number, number]> {
  try {
    const { width = 0, height = 0 } = await loadSharp()(input, { page, failOn: 'error' }).metadata();
    return [width, height];
  } catch (error) {
    throw new ConversionError(`Page ${page + 1} of the image could not be read: ${describeFailure(error)}`, { cause: error });
  }
}
