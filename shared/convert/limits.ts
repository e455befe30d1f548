import { ConversionError } from './errors.js';

/**
 * What one conversion may take on, so a file fails fast and finally instead of exhausting the
 * worker, the markup record or `GET /markups/:id`. Each limit is checked from the file's header
 * before the work it bounds wherever the header tells (page count, pixel size, duration), and a
 * breach is a ConversionError: the final `failed` state with the reason, never a retry.
 */
export const CONVERSION_LIMITS = {
  /**
   * Pages of a PDF or a multi-page TIFF. Every page is an entry of the markup record (DynamoDB
   * items stop at 400 KB; a 6,000-page PDF broke it) and a presigned URL in `GET /markups/:id`:
   * 500 pages keep the record near 100 KB and the response near 300 KB.
   */
  maxPages: 500,
  /**
   * Pixels of an image decoded whole: a TIFF page, a Photoshop composite. 50 Mpx (a 300 dpi A2
   * poster is 35 Mpx, a 45 Mpx camera frame fits) is 200 MB as 8-bit RGBA and about four times
   * that while its colours are converted, within the worker's 4 GB.
   */
  maxImagePixels: 50_000_000,
  /** Seconds of video: a 1080p re-encode runs near real time / 2 here, so 30 minutes fit the 900 s worker. */
  maxVideoSeconds: 30 * 60,
  /** Bytes of everything one markup's conversion stores (page images, video, poster, thumbnail): the largest source accepted, 5 GiB. */
  maxOutputBytes: 5 * 1024 ** 3,
} as const;

/** Refuses an image whose decoded size would pass `maxPixels`, from the size its header declares. */
export function checkImagePixels(width: number, height: number, maxPixels: number = CONVERSION_LIMITS.maxImagePixels): void {
  if (width * height > maxPixels) {
    throw new ConversionError(
      `The image is too large (${width} x ${height} pixels); at most ${maxPixels.toLocaleString('en-US')} pixels are converted.`,
    );
  }
}

/** The limits in words, for the OpenAPI descriptions of the operations that convert or show converted files. */
export const CONVERSION_LIMITS_DESCRIPTION =
  `Conversion limits: at most ${CONVERSION_LIMITS.maxPages} pages (PDF, multi-page TIFF), ` +
  `${CONVERSION_LIMITS.maxImagePixels.toLocaleString('en-US')} pixels per image (TIFF page, PSD), ${CONVERSION_LIMITS.maxVideoSeconds / 60} minutes of video ` +
  `and ${CONVERSION_LIMITS.maxOutputBytes / 1024 ** 3} GiB of converted files per markup. A file beyond them ends in \`conversionStatus\` \`failed\` ` +
  'with the reason in `conversionError` (final: it is not retried).';
