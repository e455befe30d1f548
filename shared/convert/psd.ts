import { open, readFile } from 'node:fs/promises';
import type { Layer, LayerMaskData, PixelData } from 'ag-psd';
import { DEFAULT_CMYK_PROFILE } from './cmyk-profile.js';
import { describeFailure } from '../errors.js';
import { ConversionError } from './errors.js';
import { MAX_PAGE_DIMENSION, type ConverterInput, type RenderedImage } from './images.js';
import { checkImagePixels, CONVERSION_LIMITS } from './limits.js';
import { loadAgPsd, loadSharp } from './packages.js';

/** Photoshop documents larger than this many pixels are refused from their header (the conversion limit of every image). */
export const MAX_PSD_PIXELS = CONVERSION_LIMITS.maxImagePixels;

const COLOUR_MODES: Record<number, string> = {
  0: 'Bitmap',
  1: 'Grayscale',
  2: 'Indexed',
  3: 'RGB',
  4: 'CMYK',
  7: 'Multichannel',
  8: 'Duotone',
  9: 'Lab',
};
/** Colour channels of the modes we render; Duotone image data is stored as grayscale. */
const BASE_CHANNELS: Record<number, number> = { 1: 1, 3: 3, 4: 4, 8: 1 };

export interface PsdHeader {
  /** 1: PSD, 2: PSB (large document format). */
  version: 1 | 2;
  channels: number;
  width: number;
  height: number;
  depth: number;
  mode: number;
}

/**
 * The image of a Photoshop document as a PNG in sRGB at its pixel size (scaled down to
 * `maxDimension` when larger). 8- and 16-bit RGB, CMYK and Grayscale/Duotone documents are
 * supported, PSB too.
 *
 * The merged (composite) image is decoded here (raw or PackBits, one plane per channel) and handed
 * to sharp as a planar TIFF that carries the document's ICC profile, so libvips (lcms2) converts the
 * colours to sRGB through the embedded profile, or a SWOP profile for untagged CMYK. Only the
 * composite's colour channels and its merged transparency are read from disk, never the layers.
 *
 * A document saved without "Maximize Compatibility" has no real merged image (image resource 1057
 * says so; the composite is blank): its visible RGB or Grayscale layers are read with ag-psd and
 * composited here instead.
 */
export async function convertPsd(input: ConverterInput, options: { maxDimension?: number } = {}): Promise<RenderedImage> {
  const image = await readImage(input);
  return render(image, options.maxDimension ?? MAX_PAGE_DIMENSION);
}

/** Decoded samples of a document, as the TIFF sharp reads them. */
export interface PsdPixels {
  width: number;
  height: number;
  depth: 8 | 16;
  /** CMYK samples here are ink amounts (0: no ink), as TIFF has them; PSD stores them inverted. */
  colour: 'gray' | 'rgb' | 'cmyk';
  /** The colour channels, then the transparency if `alpha`. */
  channels: number;
  alpha: boolean;
  /** One big-endian plane per channel, or (`interleaved`) one buffer of pixels. */
  planes: Buffer[];
  interleaved: boolean;
  /** The embedded ICC profile (image resource 1039), if any. */
  iccProfile?: Buffer;
}

const PROFILE_SPACES: Record<PsdPixels['colour'], string> = { gray: 'GRAY', rgb: 'RGB ', cmyk: 'CMYK' };

async function render(image: PsdPixels, maxDimension: number): Promise<RenderedImage> {
  // A profile of another colour space than the samples' (or too short to be one) is ignored.
  const embedded =
    image.iccProfile && image.iccProfile.length >= 128 && image.iccProfile.toString('latin1', 16, 20) === PROFILE_SPACES[image.colour]
      ? image.iccProfile
      : undefined;
  const fallback = image.colour === 'cmyk' ? DEFAULT_CMYK_PROFILE : undefined;
  try {
    return await encode(image, embedded ?? fallback, maxDimension);
  } catch (error) {
    // An embedded profile lcms2 cannot parse is ignored, as Photoshop does.
    if (embedded) {
      try {
        return await encode(image, fallback, maxDimension);
      } catch {
        // The first failure is the one to report.
      }
    }
    throw new ConversionError(`The Photoshop file could not be read: ${describeFailure(error)}`, { cause: error });
  }
}

async function encode(image: PsdPixels, profile: Buffer | undefined, maxDimension: number): Promise<RenderedImage> {
  // The pixel count was checked against MAX_PSD_PIXELS from the header.
  const { data, info } = await loadSharp()(tiff(image, profile), { limitInputPixels: false })
    .resize({ width: maxDimension, height: maxDimension, fit: 'inside', withoutEnlargement: true })
    // Grayscale, CMYK and ICC-tagged colours all go to 8-bit sRGB; transparency is kept.
    .toColourspace('srgb')
    .png()
    .toBuffer({ resolveWithObject: true });
  return { data, mimeType: 'image/png', width: info.width, height: info.height };
}

/** Reads the header, the image resources and the composite (or, without a real one, the layers). */
export async function readImage(input: ConverterInput): Promise<PsdPixels> {
  const source = await openSource(input);
  let layered: { header: PsdHeader; iccProfile: Buffer | undefined } | undefined;
  try {
    const fixed = await source.read(0, 26);
    if (fixed.length < 26 || fixed.toString('latin1', 0, 4) !== '8BPS') throw new ConversionError('This is not a Photoshop (PSD) file.');
    const version = fixed.readUInt16BE(4);
    if (version !== 1 && version !== 2) throw new ConversionError(`Unknown Photoshop file version ${version}.`);
    const header: PsdHeader = {
      version,
      channels: fixed.readUInt16BE(12),
      height: fixed.readUInt32BE(14),
      width: fixed.readUInt32BE(18),
      depth: fixed.readUInt16BE(22),
      mode: fixed.readUInt16BE(24),
    };
    if (
      header.channels < 1 ||
      header.channels > 56 ||
      ![1, 8, 16, 32].includes(header.depth) ||
      header.width === 0 ||
      header.height === 0 ||
      header.width > 300_000 ||
      header.height > 300_000
    ) {
      throw new ConversionError('The Photoshop file is corrupt (its header is invalid).');
    }
    const base = BASE_CHANNELS[header.mode];
    const modeName = COLOUR_MODES[header.mode] ?? `number ${header.mode}`;
    if (base === undefined)
      throw new ConversionError(`Photoshop files in ${modeName} colour mode are not supported; convert the file to RGB or CMYK.`);
    if (header.depth !== 8 && header.depth !== 16) {
      throw new ConversionError(
        `Photoshop files with ${header.depth} bit${header.depth === 1 ? '' : 's'} per channel are not supported; save the file with 8 or 16 bits per channel.`,
      );
    }
    if (header.channels < base) throw new ConversionError('The Photoshop file has no image data.');
    checkImagePixels(header.width, header.height, MAX_PSD_PIXELS);

    const lengthSize = version === 1 ? 4 : 8;
    let position = 26;
    const colourModeLength = await source.uint(position, 4);
    position += 4 + colourModeLength;
    const resourcesLength = await source.uint(position, 4);
    const resources = await source.read(position + 4, resourcesLength);
    if (resources.length < resourcesLength) throw truncated();
    position += 4 + resourcesLength;
    const iccProfile = imageResource(resources, ICC_PROFILE_RESOURCE);
    const layersLength = await source.uint(position, lengthSize);
    // A negative layer count says the first extra channel is the merged result's transparency.
    let layerCount = 0;
    if (layersLength >= 2 * lengthSize + 2 && (await source.uint(position + lengthSize, lengthSize)) > 0) {
      layerCount = (await source.read(position + 2 * lengthSize, 2)).readInt16BE(0);
    }
    // Layers, when the merged image is not real. (16-bit documents keep their layers in an 'Lr16'
    // block of the section, with a layer count of 0: the section's length is what tells.)
    if (layersLength > 0 && !hasRealMergedData(resources)) {
      layered = { header, iccProfile };
    } else {
      position += lengthSize + layersLength;
      return { ...(await readMergedImage(source, header, position, base, layerCount < 0)), ...(iccProfile ? { iccProfile } : {}) };
    }
  } finally {
    await source.close();
  }
  return compositeLayers(input, layered.header, layered.iccProfile);
}

/** The composite image's colour channels (and its transparency), decoded into planes. */
async function readMergedImage(
  source: ByteSource,
  header: PsdHeader,
  position: number,
  base: number,
  mergedAlpha: boolean,
): Promise<Omit<PsdPixels, 'iccProfile'>> {
  const { width, height, channels, version } = header;
  const depth = header.depth as 8 | 16;
  const compression = await source.uint(position, 2);
  position += 2;
  const keep = base + (mergedAlpha && channels > base ? 1 : 0);
  const rowBytes = (width * depth) / 8;
  const planeBytes = rowBytes * height;
  let data: Buffer;
  if (compression === 0) {
    const raw = await source.read(position, planeBytes * keep);
    if (raw.length < planeBytes * keep) throw truncated();
    // Copied: a buffer's subarray is the caller's memory, and CMYK samples are inverted below.
    data = Buffer.from(raw);
  } else if (compression === 1) {
    // PackBits rows, preceded by every row's byte count (2 bytes each in PSD, 4 in PSB).
    const countSize = version === 1 ? 2 : 4;
    const counts = await source.read(position, channels * height * countSize);
    if (counts.length < channels * height * countSize) throw truncated();
    const rowCount = (row: number) => (countSize === 2 ? counts.readUInt16BE(row * 2) : counts.readUInt32BE(row * 4));
    let total = 0;
    for (let row = 0; row < keep * height; row += 1) total += rowCount(row);
    const packed = await source.read(position + channels * height * countSize, total);
    if (packed.length < total) throw truncated();
    data = Buffer.alloc(planeBytes * keep);
    let at = 0;
    for (let row = 0; row < keep * height; row += 1) {
      const count = rowCount(row);
      unpackBits(packed, at, at + count, data, row * rowBytes, rowBytes);
      at += count;
    }
  } else {
    throw new ConversionError(`The Photoshop file's merged image uses compression ${compression}, which is not supported.`);
  }
  const colour = header.mode === 3 ? 'rgb' : header.mode === 4 ? 'cmyk' : 'gray';
  // Photoshop stores CMYK inverted (0 is full ink); its transparency is not.
  if (colour === 'cmyk') invert(data.subarray(0, planeBytes * base));
  const planes = Array.from({ length: keep }, (_, channel) => data.subarray(channel * planeBytes, (channel + 1) * planeBytes));
  const alpha = keep > base;
  // libvips leaves the transparency of 16-bit CMYK unscaled when it converts to 8-bit sRGB (the
  // image turns opaque): such documents are read at 8 bits per channel, the high byte of each sample.
  if (colour === 'cmyk' && alpha && depth === 16) {
    const narrow = planes.map((plane) => {
      const out = Buffer.alloc(plane.length / 2);
      for (let i = 0; i < out.length; i += 1) out[i] = plane[i * 2]!;
      return out;
    });
    return { width, height, depth: 8, colour, channels: keep, alpha, planes: narrow, interleaved: false };
  }
  // libvips misreads planar grayscale with transparency (the rows of both planes come out shifted):
  // those two planes are interleaved here.
  if (colour === 'gray' && alpha)
    return { width, height, depth, colour, channels: 2, alpha, planes: [interleave(planes, depth / 8)], interleaved: true };
  return { width, height, depth, colour, channels: keep, alpha, planes, interleaved: false };
}

function interleave(planes: Buffer[], sampleBytes: number): Buffer {
  const out = Buffer.alloc(planes.length * planes[0]!.length);
  const step = planes.length * sampleBytes;
  planes.forEach((plane, channel) => {
    for (let i = 0, o = channel * sampleBytes; i < plane.length; i += sampleBytes, o += step) {
      out[o] = plane[i]!;
      if (sampleBytes === 2) out[o + 1] = plane[i + 1]!;
    }
  });
  return out;
}

/** PackBits (the PSD flavour: a header byte n, n+1 literal bytes for n < 128, one byte repeated 257-n times for n > 128). */
function unpackBits(source: Buffer, start: number, end: number, target: Buffer, at: number, length: number): void {
  const stop = at + length;
  let i = start;
  let o = at;
  while (i < end && o < stop) {
    const n = source[i++]!;
    if (n < 128) {
      const last = Math.min(i + n + 1, end);
      while (i < last && o < stop) target[o++] = source[i++]!;
      i = last;
    } else if (n > 128) {
      if (i >= end) break;
      const runEnd = Math.min(o + 257 - n, stop);
      target.fill(source[i++]!, o, runEnd);
      o = runEnd;
    }
  }
}

function invert(data: Buffer): void {
  const words = Math.floor(data.byteOffset % 4 === 0 ? data.length / 4 : 0);
  if (words > 0) {
    const view = new Uint32Array(data.buffer, data.byteOffset, words);
    for (let i = 0; i < words; i += 1) view[i] = ~view[i]! >>> 0;
  }
  for (let i = words * 4; i < data.length; i += 1) data[i] = 255 - data[i]!;
}

/**
 * The document rebuilt from its layers (ag-psd decodes them; it reads RGB and Grayscale documents):
 * visible layers in order, at their position, with their opacity and fill opacity, their layer
 * mask and clipping to the layer below, over transparency, in normal blend mode (other blend
 * modes, layer effects and adjustment layers are not rendered; a group's opacity applies to each
 * of its layers). The whole file is read into memory.
 */
async function compositeLayers(input: ConverterInput, header: PsdHeader, iccProfile: Buffer | undefined): Promise<PsdPixels> {
  if (header.mode !== 1 && header.mode !== 3) {
    throw new ConversionError(
      `This Photoshop file was saved without a merged image, which can only be rebuilt from the layers of RGB and Grayscale documents, not ${COLOUR_MODES[header.mode]}; re-save it with Maximize Compatibility.`,
    );
  }
  const bytes = typeof input === 'string' ? await readFile(input) : input;
  const { width, height } = header;
  const canvas = Buffer.alloc(width * height * 4);
  try {
    const psd = loadAgPsd().readPsd(bytes, {
      useImageData: true,
      skipCompositeImageData: true,
      skipThumbnail: true,
      skipLinkedFilesData: true,
      // ag-psd's default, stated: the decoded layers and masks may take 2 GiB of the worker's 4 GB.
      totalMemoryLimit: 2 * 1024 ** 3,
    });
    drawLayers(canvas, width, height, psd.children, 1);
  } catch (error) {
    throw new ConversionError(`The Photoshop file's layers could not be read: ${describeFailure(error)}`, { cause: error });
  }
  const common = { width, height, depth: 8 as const, alpha: true, interleaved: true, ...(iccProfile ? { iccProfile } : {}) };
  if (header.mode === 3) return { ...common, colour: 'rgb', channels: 4, planes: [canvas] };
  // ag-psd spreads a grayscale layer's values over R, G and B: keep one of them and the transparency.
  const gray = Buffer.alloc(width * height * 2);
  for (let i = 0, o = 0; o < gray.length; i += 4, o += 2) {
    gray[o] = canvas[i]!;
    gray[o + 1] = canvas[i + 3]!;
  }
  return { ...common, colour: 'gray', channels: 2, planes: [gray] };
}

/** ag-psd's layers, bottom to top; a group's layers are drawn in turn with the group's opacity. */
function drawLayers(canvas: Buffer, width: number, height: number, layers: Layer[] | undefined, opacity: number): void {
  // A clipped layer shows only where the nearest unclipped layer below it (its base) has pixels.
  let clipBase: Layer | undefined;
  let clipBaseVisible = false;
  for (const layer of layers ?? []) {
    const visible = !layer.hidden;
    if (!layer.clipping) {
      clipBase = layer;
      clipBaseVisible = visible;
    }
    if (!visible || (layer.clipping && !clipBaseVisible)) continue;
    const layerOpacity = opacity * (layer.opacity ?? 1);
    if (layer.children) {
      drawLayers(canvas, width, height, layer.children, layerOpacity);
      continue;
    }
    drawLayer(canvas, width, height, layer, layerOpacity * (layer.fillOpacity ?? 1), layer.clipping ? clipBase : undefined);
  }
}

function drawLayer(canvas: Buffer, width: number, height: number, layer: Layer, opacity: number, clipBase: Layer | undefined): void {
  const image = layer.imageData;
  if (!image || opacity <= 0) return;
  const left = layer.left ?? 0;
  const top = layer.top ?? 0;
  const data = image.data;
  const scale = sampleScale(image);
  const mask = layer.mask && !layer.mask.disabled && layer.mask.imageData ? layer.mask : undefined;
  for (let y = Math.max(0, top); y < Math.min(height, top + image.height); y += 1) {
    for (let x = Math.max(0, left); x < Math.min(width, left + image.width); x += 1) {
      const s = ((y - top) * image.width + (x - left)) * 4;
      let alpha = data[s + 3]! * scale * opacity;
      if (mask) alpha *= maskValue(mask, x, y);
      if (clipBase) alpha *= clipBase.imageData ? pixelAlpha(clipBase, x, y) : 0;
      if (alpha <= 0) continue;
      const t = (y * width + x) * 4;
      const below = (canvas[t + 3]! / 255) * (1 - alpha);
      const out = alpha + below;
      for (let c = 0; c < 3; c += 1) canvas[t + c] = Math.round((data[s + c]! * scale * 255 * alpha + canvas[t + c]! * below) / out);
      canvas[t + 3] = Math.round(out * 255);
    }
  }
}

/** 1 / the maximum sample: 8-bit, 16-bit or 32-bit float pixels. */
function sampleScale(image: PixelData): number {
  if (image.data instanceof Float32Array) return 1;
  return image.data instanceof Uint16Array ? 1 / 65535 : 1 / 255;
}

function maskValue(mask: LayerMaskData, x: number, y: number): number {
  const image = mask.imageData!;
  const mx = x - (mask.left ?? 0);
  const my = y - (mask.top ?? 0);
  if (mx < 0 || my < 0 || mx >= image.width || my >= image.height) return (mask.defaultColor ?? 0) / 255;
  return image.data[(my * image.width + mx) * 4]! * sampleScale(image);
}

function pixelAlpha(layer: Layer, x: number, y: number): number {
  const image = layer.imageData!;
  const lx = x - (layer.left ?? 0);
  const ly = y - (layer.top ?? 0);
  if (lx < 0 || ly < 0 || lx >= image.width || ly >= image.height) return 0;
  return image.data[(ly * image.width + lx) * 4 + 3]! * sampleScale(image) * (layer.opacity ?? 1);
}

/**
 * A baseline big-endian TIFF of the samples, uncompressed, in strips of about 1 MB, with the ICC
 * profile (tag 34675) libvips converts through. Planar samples stay planar (PlanarConfiguration 2).
 */
function tiff(image: PsdPixels, profile: Buffer | undefined): Buffer {
  const { width, height, depth, channels, planes, interleaved } = image;
  const rowBytes = (width * depth * (interleaved ? channels : 1)) / 8;
  const rowsPerStrip = Math.max(1, Math.min(height, Math.floor(2 ** 20 / rowBytes)));
  const stripsPerPlane = Math.ceil(height / rowsPerStrip);
  const strips: { plane: Buffer; start: number; length: number }[] = [];
  for (const plane of planes) {
    for (let row = 0; row < height; row += rowsPerStrip) {
      strips.push({ plane, start: row * rowBytes, length: Math.min(rowsPerStrip, height - row) * rowBytes });
    }
  }
  const photometric = { gray: 1, rgb: 2, cmyk: 5 }[image.colour];
  // [tag, type (3: SHORT, 4: LONG, 7: UNDEFINED), values], in ascending tag order.
  const entries: [number, 3 | 4 | 7, number[] | Buffer][] = [
    [256, 4, [width]],
    [257, 4, [height]],
    [258, 3, Array<number>(channels).fill(depth)],
    [259, 3, [1]],
    [262, 3, [photometric]],
    [273, 4, strips.map(() => 0)],
    [277, 3, [channels]],
    [278, 4, [rowsPerStrip]],
    [279, 4, strips.map((strip) => strip.length)],
    [284, 3, [interleaved ? 1 : 2]],
  ];
  // The last channel is unassociated (straight) transparency.
  if (image.alpha) entries.push([338, 3, [2]]);
  if (profile) entries.push([34675, 7, profile]);
  const ifdLength = 2 + entries.length * 12 + 4;
  const values: Buffer[] = [];
  let valuesEnd = 8 + ifdLength;
  const ifd = Buffer.alloc(ifdLength);
  ifd.writeUInt16BE(entries.length, 0);
  let stripOffsets: { buffer: Buffer; at: number } | undefined;
  entries.forEach(([tag, type, list], i) => {
    const at = 2 + i * 12;
    const size = type === 3 ? 2 : type === 4 ? 4 : 1;
    const count = Buffer.isBuffer(list) ? list.length : list.length;
    let bytes: Buffer;
    if (Buffer.isBuffer(list)) {
      bytes = list;
    } else {
      bytes = Buffer.alloc(count * size);
      list.forEach((value, j) => (size === 2 ? bytes.writeUInt16BE(value, j * 2) : bytes.writeUInt32BE(value, j * 4)));
    }
    ifd.writeUInt16BE(tag, at);
    ifd.writeUInt16BE(type, at + 2);
    ifd.writeUInt32BE(count, at + 4);
    if (bytes.length <= 4) {
      bytes.copy(ifd, at + 8);
      if (tag === 273) stripOffsets = { buffer: ifd, at: at + 8 };
    } else {
      ifd.writeUInt32BE(valuesEnd, at + 8);
      if (tag === 273) stripOffsets = { buffer: bytes, at: 0 };
      values.push(bytes);
      valuesEnd += bytes.length;
      if (bytes.length % 2) {
        values.push(Buffer.alloc(1));
        valuesEnd += 1;
      }
    }
  });
  // The pixels follow the values: each plane whole, its strips in order.
  let offset = valuesEnd;
  let strip = 0;
  for (const plane of planes) {
    for (let i = 0; i < stripsPerPlane; i += 1, strip += 1) {
      stripOffsets!.buffer.writeUInt32BE(offset + strips[strip]!.start, stripOffsets!.at + strip * 4);
    }
    offset += plane.length;
  }
  if (offset > 0xffff_ffff) throw new ConversionError('The Photoshop document is too large to be converted.');
  const head = Buffer.from([0x4d, 0x4d, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x08]);
  return Buffer.concat([head, ifd, ...values, ...planes]);
}

const ICC_PROFILE_RESOURCE = 1039;
const VERSION_INFO_RESOURCE = 1057;

/**
 * Whether the composite image is real: image resource 1057 (version info: a 4-byte version, then a
 * hasRealMergedData byte) says it is not when the file was saved without Maximize Compatibility.
 * Files without the resource have one.
 */
function hasRealMergedData(resources: Buffer): boolean {
  const info = imageResource(resources, VERSION_INFO_RESOURCE);
  return !info || info.length < 5 || info[4] !== 0;
}

/** One image resource block's data: `8BIM`, id, padded Pascal name, size, padded data. */
function imageResource(resources: Buffer, id: number): Buffer | undefined {
  let at = 0;
  while (at + 12 <= resources.length) {
    const nameLength = resources[at + 6]!;
    const nameBytes = (nameLength + 2) & ~1;
    const sizeAt = at + 6 + nameBytes;
    if (sizeAt + 4 > resources.length) return undefined;
    const size = resources.readUInt32BE(sizeAt);
    const data = resources.subarray(sizeAt + 4, sizeAt + 4 + size);
    if (resources.readUInt16BE(at + 4) === id) return data.length === size ? data : undefined;
    at = sizeAt + 4 + size + (size % 2);
  }
  return undefined;
}

const truncated = () => new ConversionError('The Photoshop file is truncated.');

interface ByteSource {
  read(position: number, length: number): Promise<Buffer>;
  uint(position: number, size: 2 | 4 | 8): Promise<number>;
  close(): Promise<void>;
}

/** Random access to a file or a buffer, so a layered PSD is never read whole. */
async function openSource(input: ConverterInput): Promise<ByteSource> {
  let read: (position: number, length: number) => Promise<Buffer>;
  let close = async (): Promise<void> => undefined;
  if (typeof input === 'string') {
    const file = await open(input, 'r');
    read = async (position, length) => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await file.read(buffer, 0, length, position);
      return buffer.subarray(0, bytesRead);
    };
    close = async () => file.close();
  } else {
    read = async (position, length) => input.subarray(position, position + length);
  }
  return {
    read,
    close,
    uint: async (position, size) => {
      const bytes = await read(position, size);
      if (bytes.length < size) throw truncated();
      if (size === 2) return bytes.readUInt16BE(0);
      if (size === 4) return bytes.readUInt32BE(0);
      return Number(bytes.readBigUInt64BE(0));
    },
  };
}
