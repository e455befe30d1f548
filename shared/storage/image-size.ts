/**
 * Pixel size of PNG, JPEG, GIF, BMP, WebP and SVG files, read from the first bytes of the file.
 *
 * API functions only need the size of images they store as uploaded, and a native image library
 * (sharp) would tie their bundles to one CPU architecture; the headers of these formats are simple
 * enough to read directly. Everything is bounds-checked: a short or malformed header gives
 * undefined, never an exception.
 */

export interface ImageSize {
  width: number;
  height: number;
}

/** Bytes worth reading from storage to find the size (JPEG's EXIF/ICC segments may come first). */
export const IMAGE_HEADER_BYTES = 256 * 1024;

export function imageSize(bytes: Buffer): ImageSize | undefined {
  try {
    return pngSize(bytes) ?? gifSize(bytes) ?? bmpSize(bytes) ?? webpSize(bytes) ?? jpegSize(bytes) ?? svgSize(bytes);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** The header reader of each displayable image type, by its canonical mime type (`fileTypeOf`). */
const READERS: Readonly<Record<string, (bytes: Buffer) => ImageSize | undefined>> = {
  'image/png': pngSize,
  'image/apng': pngSize,
  'image/jpeg': jpegSize,
  'image/gif': gifSize,
  'image/bmp': bmpSize,
  'image/webp': webpSize,
};

/**
 * Reads `bytes` as the image type they are declared to be (a canonical mime type), and only as
 * that: undefined when they are not such an image (random bytes, a JPEG declared `image/png`);
 * otherwise its pixel size, when the header gives one. A raster image always has a size; an SVG is
 * an image once it has an `<svg>` root element, whose size may be left to the viewer.
 */
export function readImageAs(bytes: Buffer, mimeType: string): { size?: ImageSize } | undefined {
  try {
    if (mimeType === 'image/svg+xml') return svgTagOf(bytes) === undefined ? undefined : { size: svgSize(bytes) };
    const size = READERS[mimeType]?.(bytes);
    return size ? { size } : undefined;
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

const valid = (width: number, height: number): ImageSize | undefined =>
  Number.isFinite(width) && Number.isFinite(height) && width > 0 && height > 0
    ? { width: Math.round(width), height: Math.round(height) }
    : undefined;

const startsWith = (bytes: Buffer, ascii: string, at = 0) =>
  bytes.length >= at + ascii.length && bytes.toString('latin1', at, at + ascii.length) === ascii;

function pngSize(bytes: Buffer): ImageSize | undefined {
  if (!startsWith(bytes, '\x89PNG\r\n\x1a\n') || !startsWith(bytes, 'IHDR', 12)) return undefined;
  return valid(bytes.readUInt32BE(16), bytes.readUInt32BE(20));
}

function gifSize(bytes: Buffer): ImageSize | undefined {
  if (!startsWith(bytes, 'GIF87a') && !startsWith(bytes, 'GIF89a')) return undefined;
  return valid(bytes.readUInt16LE(6), bytes.readUInt16LE(8));
}

function bmpSize(bytes: Buffer): ImageSize | undefined {
  if (!startsWith(bytes, 'BM') || bytes.length < 26) return undefined;
  const headerSize = bytes.readUInt32LE(14);
  if (headerSize === 12) return valid(bytes.readUInt16LE(18), bytes.readUInt16LE(20));
  // Bottom-up bitmaps store a positive height, top-down ones a negative height.
  return valid(Math.abs(bytes.readInt32LE(18)), Math.abs(bytes.readInt32LE(22)));
}

function webpSize(bytes: Buffer): ImageSize | undefined {
  if (!startsWith(bytes, 'RIFF') || !startsWith(bytes, 'WEBP', 8)) return undefined;
  if (startsWith(bytes, 'VP8 ', 12)) {
    // Lossy: a 3-byte frame tag, the start code 9d 01 2a, then 14-bit width and height.
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return undefined;
    return valid(bytes.readUInt16LE(26) & 0x3fff, bytes.readUInt16LE(28) & 0x3fff);
  }
  if (startsWith(bytes, 'VP8L', 12)) {
    // Lossless: signature 0x2f, then width-1 and height-1 in 14 bits each.
    if (bytes[20] !== 0x2f) return undefined;
    const bits = bytes.readUInt32LE(21);
    return valid((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (startsWith(bytes, 'VP8X', 12)) {
    // Extended: canvas width-1 and height-1 in 24 bits each, after 4 bytes of flags.
    return valid(bytes.readUIntLE(24, 3) + 1, bytes.readUIntLE(27, 3) + 1);
  }
  return undefined;
}

/** SOF markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not. */
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

function jpegSize(bytes: Buffer): ImageSize | undefined {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  let orientation = 1;
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1]!;
    if (marker === 0xff) {
      offset += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2;
      continue;
    }
    const length = bytes.readUInt16BE(offset + 2);
    if (marker === 0xe1) orientation = exifOrientation(bytes.subarray(offset + 4, offset + 2 + length)) ?? orientation;
    if (isStartOfFrame(marker)) {
      const height = bytes.readUInt16BE(offset + 5);
      const width = bytes.readUInt16BE(offset + 7);
      // Orientations 5-8 turn the picture a quarter: browsers show it with width and height swapped.
      return orientation >= 5 && orientation <= 8 ? valid(height, width) : valid(width, height);
    }
    offset += 2 + length;
  }
  return undefined;
}

/** The EXIF orientation tag (0x0112) of an APP1 segment, if it holds one. */
function exifOrientation(segment: Buffer): number | undefined {
  if (!startsWith(segment, 'Exif\0\0')) return undefined;
  const tiff = segment.subarray(6);
  const little = startsWith(tiff, 'II');
  if (!little && !startsWith(tiff, 'MM')) return undefined;
  const u16 = (at: number) => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const ifd = u32(4);
  const entries = u16(ifd);
  for (let i = 0; i < entries; i += 1) {
    const entry = ifd + 2 + i * 12;
    if (u16(entry) === 0x0112) return u16(entry + 8);
  }
  return undefined;
}

/** `width`/`height` attributes in pixels (or unitless), else the `viewBox` size. */
function svgSize(bytes: Buffer): ImageSize | undefined {
  const tag = svgTagOf(bytes);
  if (!tag) return undefined;
  const attribute = (name: string) => new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`, 'i').exec(tag)?.[1]?.trim();
  const pixels = (value: string | undefined) => {
    const match = value ? /^([0-9]*\.?[0-9]+)(px)?$/i.exec(value) : null;
    return match ? Number(match[1]) : undefined;
  };
  const width = pixels(attribute('width'));
  const height = pixels(attribute('height'));
  if (width !== undefined && height !== undefined) return valid(width, height);
  const box = attribute('viewBox')
    ?.split(/[\s,]+/)
    .map(Number);
  if (box?.length === 4) return valid(box[2]!, box[3]!);
  return undefined;
}

/** The `<svg ...>` start tag within the first 64 KiB, where an SVG file has its root element. */
function svgTagOf(bytes: Buffer): string | undefined {
  const text = bytes.toString('utf8', 0, Math.min(bytes.length, 64 * 1024));
  return /<svg\b[^>]*>/i.exec(text)?.[0];
}
