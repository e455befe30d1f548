import { describeFailure } from '../errors.js';
import { ConversionError } from './errors.js';
import type { ConverterInput, RenderedImage } from './images.js';
import { loadSharp } from './packages.js';

/** The box a screenshot thumbnail fits inside: small enough for a thread list, big enough to recognise the page. */
export const SCREENSHOT_THUMBNAIL_WIDTH = 400;
export const SCREENSHOT_THUMBNAIL_HEIGHT = 300;

/**
 * A thumbnail of a thread screenshot: the whole picture (no cropping, aspect ratio kept) scaled
 * down to fit 400x300, never enlarged; an animated image gives its first frame. Pictures with
 * transparency stay PNG so the transparency survives; others become JPEG, a fraction of the size
 * for the photographic content screenshots often hold. A file that is not a readable image (corrupt,
 * truncated, or a format sharp does not decode, such as BMP) is a ConversionError: retrying will
 * not help.
 */
export async function makeScreenshotThumbnail(input: ConverterInput): Promise<RenderedImage> {
  const sharp = loadSharp();
  try {
    const image = sharp(input);
    const { hasAlpha } = await image.metadata();
    const resized = image
      .rotate()
      .resize(SCREENSHOT_THUMBNAIL_WIDTH, SCREENSHOT_THUMBNAIL_HEIGHT, { fit: 'inside', withoutEnlargement: true });
    const encoded = hasAlpha ? resized.png() : resized.jpeg({ quality: 82 });
    const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
    return { data, mimeType: hasAlpha ? 'image/png' : 'image/jpeg', width: info.width, height: info.height };
  } catch (error) {
    throw new ConversionError(`The screenshot could not be read as an image: ${describeFailure(error)}`, { cause: error });
  }
}
