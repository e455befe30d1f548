import { open } from 'node:fs/promises';
import { ConversionError, describeFailure } from './errors.js';
import { fitPng, type ConverterInput, type RenderedImage } from './images.js';
import { checkImagePixels, CONVERSION_LIMITS } from './limits.js';
import { loadMupdf, type MupdfModule } from './packages.js';

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
 * The merged (composite) image of a Photoshop document as a PNG in sRGB at its pixel size (scaled
 * down to `maxDimension` when larger). 8- and 16-bit RGB, CMYK and Grayscale/Duotone documents
 * are supported, PSB too; colours are converted with ICC colour management (lcms2 in mupdf) through
 * the document's embedded profile, or mupdf's default RGB/CMYK/Gray profiles without one.
 *
 * mupdf decodes the composite, but it refuses documents with channels beyond the colour mode's
 * (saved selections, spot channels, transparency of Grayscale/CMYK documents) and it would read a
 * whole layered file into WASM memory. So the file is first reduced to a minimal PSD: the header,
 * the image resources (ICC profile, resolution), no layers, and only the composite's colour channels
 * (plus the merged transparency of RGB documents). Only those bytes are read from disk.
 */
export async function convertPsd(input: ConverterInput, options: { maxDimension?: number } = {}): Promise<RenderedImage> {
  const composite = await readComposite(input);
  const mupdf = await loadMupdf();
  let image: InstanceType<MupdfModule['Image']> | undefined;
  let pixmap: InstanceType<MupdfModule['Pixmap']> | undefined;
  let rendered: RenderedImage;
  try {
    image = new mupdf.Image(composite.psd);
    pixmap = image.toPixmap();
    if (composite.iccProfile) pixmap = tagWithProfile(mupdf, pixmap, composite.iccProfile);
    // Grayscale, CMYK and ICC-tagged colours all go to sRGB; transparency is kept.
    if (pixmap.getColorSpace()?.getName() !== mupdf.ColorSpace.DeviceRGB.getName()) {
      const converted = pixmap.convertToColorSpace(mupdf.ColorSpace.DeviceRGB, true);
      pixmap.destroy();
      pixmap = converted;
    }
    // asPNG un-premultiplies mupdf's premultiplied alpha.
    rendered = { data: Buffer.from(pixmap.asPNG()), mimeType: 'image/png', width: pixmap.getWidth(), height: pixmap.getHeight() };
  } catch (error) {
    throw new ConversionError(`The Photoshop file could not be read: ${describeFailure(error)}`, { cause: error });
  } finally {
    pixmap?.destroy();
    image?.destroy();
  }
  return fitPng(rendered, options.maxDimension);
}

/**
 * mupdf's PSD loader leaves the document's embedded ICC profile (an Adobe RGB photo, a FOGRA CMYK
 * print file) unused and treats the samples as device colours. The same samples are put in a pixmap
 * of the profile's colour space, so the conversion to sRGB goes through the profile. A profile that
 * cannot be parsed, or that does not fit the colour mode, is ignored.
 */
function tagWithProfile(mupdf: MupdfModule, pixmap: InstanceType<MupdfModule['Pixmap']>, profile: Buffer): InstanceType<MupdfModule['Pixmap']> {
  let colorSpace: InstanceType<MupdfModule['ColorSpace']>;
  try {
    colorSpace = new mupdf.ColorSpace(profile, 'embedded profile');
  } catch {
    return pixmap;
  }
  if (colorSpace.getNumberOfComponents() !== pixmap.getColorSpace()?.getNumberOfComponents()) return pixmap;
  const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = pixmap.getBounds();
  const tagged = new mupdf.Pixmap(colorSpace, [x0, y0, x1, y1], pixmap.getAlpha() === 1);
  if (tagged.getStride() !== pixmap.getStride()) {
    tagged.destroy();
    return pixmap;
  }
  // Both views are taken after the allocation above, which may have grown (and moved) WASM memory.
  tagged.getPixels().set(pixmap.getPixels());
  pixmap.destroy();
  return tagged;
}

export interface PsdComposite {
  /** A minimal PSD: header, image resources, no layers, the merged image's kept channels. */
  psd: Buffer;
  /** The embedded ICC profile (image resource 1039), if any. */
  iccProfile?: Buffer;
}

/** Reads what `convertPsd` needs of a PSD/PSB: a minimal PSD mupdf can decode, and the ICC profile. */
export async function readComposite(input: ConverterInput): Promise<PsdComposite> {
  const source = await openSource(input);
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
    if (header.channels < 1 || header.channels > 56 || ![1, 8, 16, 32].includes(header.depth) || header.width === 0 || header.height === 0 || header.width > 300_000 || header.height > 300_000) {
      throw new ConversionError('The Photoshop file is corrupt (its header is invalid).');
    }
    const base = BASE_CHANNELS[header.mode];
    const modeName = COLOUR_MODES[header.mode] ?? `number ${header.mode}`;
    if (base === undefined) throw new ConversionError(`Photoshop files in ${modeName} colour mode are not supported; convert the file to RGB or CMYK.`);
    if (header.depth !== 8 && header.depth !== 16) {
      throw new ConversionError(`Photoshop files with ${header.depth} bit${header.depth === 1 ? '' : 's'} per channel are not supported; save the file with 8 or 16 bits per channel.`);
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
    const layersLength = await source.uint(position, lengthSize);
    // A negative layer count says the first extra channel is the merged result's transparency.
    let layerCount = 0;
    if (layersLength >= 2 * lengthSize + 2 && (await source.uint(position + lengthSize, lengthSize)) > 0) {
      layerCount = (await source.read(position + 2 * lengthSize, 2)).readInt16BE(0);
    }
    position += lengthSize + layersLength;
    const compression = await source.uint(position, 2);
    position += 2;

    const keep = base + (header.mode === 3 && layerCount < 0 && header.channels > base ? 1 : 0);
    const rows = header.height;
    let table = Buffer.alloc(0);
    let data: Buffer;
    if (compression === 0) {
      const plane = (rows * header.width * header.depth) / 8;
      data = await source.read(position, plane * keep);
      if (data.length < plane * keep) throw truncated();
    } else if (compression === 1) {
      // PackBits rows, preceded by every row's byte count (2 bytes each in PSD, 4 in PSB).
      const countSize = version === 1 ? 2 : 4;
      const counts = await source.read(position, header.channels * rows * countSize);
      if (counts.length < header.channels * rows * countSize) throw truncated();
      table = Buffer.alloc(keep * rows * 2);
      let total = 0;
      for (let row = 0; row < keep * rows; row += 1) {
        const count = countSize === 2 ? counts.readUInt16BE(row * 2) : counts.readUInt32BE(row * 4);
        if (count > 0xffff) throw new ConversionError('The Photoshop document is too large to be converted.');
        table.writeUInt16BE(count, row * 2);
        total += count;
      }
      data = await source.read(position + header.channels * rows * countSize, total);
      if (data.length < total) throw truncated();
    } else {
      throw new ConversionError(`The Photoshop file's merged image uses compression ${compression}, which is not supported.`);
    }

    const out = Buffer.alloc(26);
    fixed.copy(out, 0, 0, 26);
    out.writeUInt16BE(1, 4);
    out.writeUInt16BE(keep, 12);
    out.writeUInt16BE(header.mode === 8 ? 1 : header.mode, 24);
    // No colour mode data (Duotone's inks are not needed for its grayscale data), no layers.
    const before = Buffer.alloc(8);
    before.writeUInt32BE(resourcesLength, 4);
    const after = Buffer.alloc(6);
    after.writeUInt16BE(compression, 4);
    const iccProfile = imageResource(resources, ICC_PROFILE_RESOURCE);
    return { psd: Buffer.concat([out, before, resources, after, table, data]), ...(iccProfile ? { iccProfile } : {}) };
  } finally {
    await source.close();
  }
}

const ICC_PROFILE_RESOURCE = 1039;

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
