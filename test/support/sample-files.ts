import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { ffmpegPath, loadSharp } from '../../shared/convert/packages.js';

/**
 * Small real files of every kind the conversion worker handles, made in the test run: no binary
 * fixtures in the repository, and every dimension a test checks is chosen here. The exceptions are
 * test/fixtures/pdf-reference (how mupdf rendered a PDF, kept since mupdf can no longer do it) and
 * test/fixtures/video (WebM test patterns: our ffmpeg has no VP8 or Vorbis encoder).
 */

type Rgb = readonly [number, number, number];

/** Width and height from a PNG's IHDR chunk (throws when the bytes are not a PNG). */
export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.subarray(1, 4).toString('latin1') !== 'PNG') throw new Error('not a PNG');
  return { width: view.readUInt32BE(16), height: view.readUInt32BE(20) };
}

// TIFF

export interface TiffPage {
  width: number;
  height: number;
  /** Filled with this colour (0..255 per channel). */
  rgb: Rgb;
  /** Stored as CMYK (PhotometricInterpretation 5) instead of RGB. */
  cmyk?: boolean;
}

/**
 * A baseline, uncompressed, multi-page TIFF written by hand: one IFD per page, so pages may differ
 * in size (sharp writes multi-page TIFFs only as equal-sized frames).
 */
export function makeTiff(pages: readonly TiffPage[]): Buffer {
  const chunks: Buffer[] = [];
  let offset = 8;
  const header = Buffer.alloc(8);
  header.write('II*\0', 0, 'latin1');
  chunks.push(header);
  const ifdOffsets: { at: Buffer; position: number }[] = [{ at: header, position: 4 }];
  for (const [index, page] of pages.entries()) {
    const samples = page.cmyk ? 4 : 3;
    const pixel = page.cmyk ? cmykOf(page.rgb) : page.rgb;
    const strip = Buffer.alloc(page.width * page.height * samples);
    for (let i = 0; i < page.width * page.height; i += 1) for (let s = 0; s < samples; s += 1) strip[i * samples + s] = pixel[s]!;
    const stripOffset = offset;
    chunks.push(strip);
    offset += strip.length + (strip.length % 2);
    if (strip.length % 2) chunks.push(Buffer.alloc(1));
    const bits = Buffer.alloc(samples * 2);
    for (let s = 0; s < samples; s += 1) bits.writeUInt16LE(8, s * 2);
    const bitsOffset = offset;
    chunks.push(bits);
    offset += bits.length;
    const entries: [tag: number, type: 3 | 4, count: number, value: number][] = [
      [254, 4, 1, 2],
      [256, 4, 1, page.width],
      [257, 4, 1, page.height],
      [258, 3, samples, bitsOffset],
      [259, 3, 1, 1],
      [262, 3, 1, page.cmyk ? 5 : 2],
      [273, 4, 1, stripOffset],
      [277, 3, 1, samples],
      [278, 4, 1, page.height],
      [279, 4, 1, strip.length],
      [284, 3, 1, 1],
      [297, 3, 2, index | (pages.length << 16)],
    ];
    const ifd = Buffer.alloc(2 + entries.length * 12 + 4);
    ifd.writeUInt16LE(entries.length, 0);
    entries.forEach(([tag, type, count, value], i) => {
      const at = 2 + i * 12;
      ifd.writeUInt16LE(tag, at);
      ifd.writeUInt16LE(type, at + 2);
      ifd.writeUInt32LE(count, at + 4);
      if (type === 3 && count === 1) ifd.writeUInt16LE(value, at + 8);
      else ifd.writeUInt32LE(value, at + 8);
    });
    for (const pending of ifdOffsets.splice(0)) pending.at.writeUInt32LE(offset, pending.position);
    ifdOffsets.push({ at: ifd, position: ifd.length - 4 });
    chunks.push(ifd);
    offset += ifd.length;
  }
  return Buffer.concat(chunks);
}

/** Naive RGB -> CMYK (0..255 ink), enough to make a CMYK file of a known colour. */
function cmykOf([r, g, b]: Rgb): [number, number, number, number] {
  const k = 255 - Math.max(r, g, b);
  if (k === 255) return [0, 0, 0, 255];
  const ink = (channel: number) => Math.round(((255 - channel - k) / (255 - k)) * 255);
  return [ink(r), ink(g), ink(b), k];
}

// PSD

export interface PsdOptions {
  width: number;
  height: number;
  depth: 8 | 16;
  mode: 'rgb' | 'cmyk' | 'gray';
  /** Colour of every pixel, 0..1 per channel of the mode (CMYK as ink amounts). */
  colour: readonly number[];
  /** PackBits (as Photoshop saves) instead of raw image data; 8-bit only. */
  rle?: boolean;
  /**
   * Adds a transparency channel to the merged image (a left half opaque, right half transparent)
   * and one layer with a negative layer count, as Photoshop records a transparent document.
   */
  transparent?: boolean;
  /** Extra channels after the colour (and transparency) channels, e.g. a saved selection. */
  extraChannels?: number;
  /** Embedded as image resource 1039, as Photoshop embeds the document's colour profile. */
  iccProfile?: Buffer;
  /**
   * `false` writes image resource 1057 (version info) saying the merged image is not real, as
   * Photoshop does for a file saved without Maximize Compatibility (the layers hold the image).
   */
  hasRealMergedData?: boolean;
}

const PSD_MODES = { gray: 1, rgb: 3, cmyk: 4 } as const;

/**
 * A Photoshop document written by hand (Adobe's PSD format: header, colour mode data, image
 * resources, layer and mask information, merged image data), for the converter's tests.
 */
export function makePsd(options: PsdOptions): Buffer {
  const { width, height, depth } = options;
  const bytes = depth / 8;
  const colourChannels = options.colour.length;
  const channels = colourChannels + (options.transparent ? 1 : 0) + (options.extraChannels ?? 0);
  // Photoshop stores CMYK inverted: 0 is full ink.
  const stored = (value: number) => (options.mode === 'cmyk' ? 1 - value : value);
  const channelValue = (channel: number, x: number): number => {
    if (channel < colourChannels) return stored(options.colour[channel]!);
    if (options.transparent && channel === colourChannels) return x < width / 2 ? 1 : 0;
    return 0.5;
  };
  const plane = (channel: number): Buffer[] => {
    const rows: Buffer[] = [];
    for (let y = 0; y < height; y += 1) {
      const row = Buffer.alloc(width * bytes);
      for (let x = 0; x < width; x += 1) {
        const value = channelValue(channel, x);
        if (bytes === 1) row[x] = Math.round(value * 255);
        else row.writeUInt16BE(Math.round(value * 65535), x * 2);
      }
      rows.push(row);
    }
    return rows;
  };

  const header = Buffer.alloc(26);
  header.write('8BPS', 0, 'latin1');
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(channels, 12);
  header.writeUInt32BE(height, 14);
  header.writeUInt32BE(width, 18);
  header.writeUInt16BE(depth, 22);
  header.writeUInt16BE(PSD_MODES[options.mode], 24);
  const colourModeData = u32(0);
  const imageResources = resourceSection([
    ...(options.iccProfile ? [{ id: 1039, data: options.iccProfile }] : []),
    ...(options.hasRealMergedData === false ? [{ id: 1057, data: versionInfo(false) }] : []),
  ]);
  const layers = options.transparent ? layerSection(options, plane, colourChannels) : u32(0);

  const planes = Array.from({ length: channels }, (_, channel) => plane(channel));
  let imageData: Buffer;
  if (options.rle) {
    if (depth !== 8) throw new Error('makePsd writes PackBits for 8-bit documents only');
    const packed = planes.flat().map(packBits);
    const counts = Buffer.alloc(packed.length * 2);
    packed.forEach((row, i) => counts.writeUInt16BE(row.length, i * 2));
    imageData = Buffer.concat([u16(1), counts, ...packed]);
  } else {
    imageData = Buffer.concat([u16(0), ...planes.flat()]);
  }
  return Buffer.concat([header, colourModeData, imageResources, layers, imageData]);
}

/** An image resources section holding these resource blocks. */
function resourceSection(resources: { id: number; data: Buffer }[]): Buffer {
  const blocks = resources.map(({ id, data }) =>
    Buffer.concat([Buffer.from('8BIM', 'latin1'), u16(id), Buffer.from([0, 0]), u32(data.length), data, Buffer.alloc(data.length % 2)]),
  );
  const section = Buffer.concat(blocks);
  return Buffer.concat([u32(section.length), section]);
}

/** Image resource 1057: version 1, hasRealMergedData, writer and reader names (UTF-16 with a length), file version 1. */
function versionInfo(hasRealMergedData: boolean): Buffer {
  const unicode = (text: string) => Buffer.concat([u32(text.length), Buffer.from(text, 'utf16le').swap16()]);
  return Buffer.concat([
    u32(1),
    Buffer.from([hasRealMergedData ? 1 : 0]),
    unicode('Adobe Photoshop'),
    unicode('Adobe Photoshop 2024'),
    u32(1),
  ]);
}

/** An ICC profile libvips ships (`p3`: Display P3, `cmyk`: its CMYK fallback profile), for PSDs that embed one. */
export async function iccProfile(name: 'p3' | 'cmyk'): Promise<Buffer> {
  const sharp = loadSharp();
  const image = sharp({ create: { width: 1, height: 1, channels: 3, background: 'white' } }).withIccProfile(name);
  const tagged = await (name === 'cmyk' ? image.toColourspace('cmyk').tiff() : image.png()).toBuffer();
  const { icc } = await sharp(tagged).metadata();
  if (!icc) throw new Error(`sharp embedded no ${name} profile`);
  return icc;
}

/** One normal layer covering the canvas with the colour and transparency channels, layer count -1. */
function layerSection(options: PsdOptions, plane: (channel: number) => Buffer[], colourChannels: number): Buffer {
  const { width, height } = options;
  const ids = [...Array.from({ length: colourChannels }, (_, i) => i), -1];
  const channelData = ids.map((id) => Buffer.concat([u16(0), ...plane(id === -1 ? colourChannels : id)]));
  const name = Buffer.from([5, ...Buffer.from('Layer'), 0, 0]);
  const extra = Buffer.concat([u32(0), u32(0), name]);
  const record = Buffer.concat([
    u32(0),
    u32(0),
    u32(height),
    u32(width),
    u16(ids.length),
    ...ids.map((id, i) => {
      const info = Buffer.alloc(2 + 4);
      info.writeInt16BE(id, 0);
      info.writeUInt32BE(channelData[i]!.length, 2);
      return info;
    }),
    Buffer.from('8BIMnorm', 'latin1'),
    Buffer.from([255, 0, 0, 0]),
    u32(extra.length),
    extra,
  ]);
  const count = Buffer.alloc(2);
  count.writeInt16BE(-1, 0);
  let layerInfo = Buffer.concat([count, record, ...channelData]);
  if (layerInfo.length % 2) layerInfo = Buffer.concat([layerInfo, Buffer.alloc(1)]);
  const section = Buffer.concat([u32(layerInfo.length), layerInfo, u32(0)]);
  return Buffer.concat([u32(section.length), section]);
}

/** PackBits as literal runs of at most 128 bytes (valid PackBits, no repeat runs needed). */
function packBits(row: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < row.length; i += 128) {
    const run = row.subarray(i, i + 128);
    parts.push(Buffer.from([run.length - 1]), run);
  }
  return Buffer.concat(parts);
}

const u16 = (value: number) => {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value, 0);
  return buffer;
};
const u32 = (value: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value, 0);
  return buffer;
};

// EPS

/**
 * An EPS drawn in PostScript by hand: a `width` x `height` point bounding box with a filled
 * rectangle and a line of text.
 */
export function makeEps({
  width,
  height,
  rgb = [0.2, 0.4, 0.8],
}: {
  width: number;
  height: number;
  rgb?: readonly [number, number, number];
}): Buffer {
  return Buffer.from(
    [
      '%!PS-Adobe-3.0 EPSF-3.0',
      `%%BoundingBox: 0 0 ${width} ${height}`,
      `%%HiResBoundingBox: 0 0 ${width} ${height}`,
      '%%Title: sample',
      '%%EndComments',
      `${rgb.join(' ')} setrgbcolor`,
      `0 0 ${width} ${height} rectfill`,
      `/Helvetica findfont ${Math.max(6, Math.round(height / 6))} scalefont setfont 1 setgray`,
      `${width / 10} ${height / 2} moveto (Review Board) show`,
      'showpage',
      '%%EOF',
      '',
    ].join('\n'),
    'latin1',
  );
}

/** An EPS whose program never ends (for the time limit). */
export function makeEndlessEps(): Buffer {
  return Buffer.from('%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 100 100\n%%EndComments\n{ } loop\nshowpage\n%%EOF\n', 'latin1');
}

// PDF

/** A PDF with one page per size (points), each with a coloured frame and its page number. */
export async function makePdf(sizes: readonly { width: number; height: number }[]): Promise<Buffer> {
  // No creation and modification dates: the same sizes give the same bytes.
  const document = await PDFDocument.create({ updateMetadata: false });
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const [index, { width, height }] of sizes.entries()) {
    const contents = [
      `0.85 0.2 0.2 rg 10 10 ${width - 20} ${height - 20} re f`,
      `1 1 1 rg 20 20 ${width - 40} ${height - 40} re f`,
      `BT /F1 ${Math.min(36, Math.round(width / 8))} Tf 0 0 0 rg 30 ${Math.round(height / 2)} Td (Page ${index + 1}) Tj ET`,
    ].join('\n');
    const page = document.addPage([width, height]);
    page.node.setFontDictionary(PDFName.of('F1'), font.ref);
    page.node.set(PDFName.of('Contents'), document.context.register(document.context.flateStream(contents)));
  }
  return Buffer.from(await document.save());
}

/**
 * A one-page PDF that needs a user password to open, written by hand (pdf-lib does not encrypt):
 * the standard security handler, revision 2 (RC4, 40-bit key; ISO 32000-1, 7.6.3, algorithms 2 to 4),
 * with its content stream encrypted, so that it opens, and shows a blue square, with the password.
 */
export function makeLockedPdf(userPassword = 'secret', ownerPassword = 'owner'): Buffer {
  const id = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');
  const permissions = -4; // Everything allowed, bits 1 and 2 clear.
  const owner = rc4(md5(padPassword(ownerPassword)).subarray(0, 5), padPassword(userPassword));
  const p = Buffer.alloc(4);
  p.writeInt32LE(permissions);
  const key = md5(Buffer.concat([padPassword(userPassword), owner, p, id])).subarray(0, 5);
  const user = rc4(key, PASSWORD_PADDING);
  // Object 4's key: the file key, the object number (3 bytes) and generation (2 bytes), little-endian.
  const objectKey = md5(Buffer.concat([key, Buffer.from([4, 0, 0, 0, 0])])).subarray(0, 10);
  const content = rc4(objectKey, Buffer.from('0 0 1 rg 0 0 50 50 re f', 'latin1'));
  const hex = (bytes: Buffer) => `<${bytes.toString('hex')}>`;
  return writePdf(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Resources << >> /Contents 4 0 R >>',
      Buffer.concat([Buffer.from(`<< /Length ${content.length} >>\nstream\n`, 'latin1'), content, Buffer.from('\nendstream', 'latin1')]),
      `<< /Filter /Standard /V 1 /R 2 /Length 40 /O ${hex(owner)} /U ${hex(user)} /P ${permissions} >>`,
    ],
    `/Root 1 0 R /Encrypt 5 0 R /ID [${hex(id)} ${hex(id)}]`,
  );
}

/** The 32 bytes a password is padded (or cut) to (ISO 32000-1, 7.6.3.3, algorithm 2, step a). */
const PASSWORD_PADDING = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');

function padPassword(password: string): Buffer {
  return Buffer.concat([Buffer.from(password, 'latin1'), PASSWORD_PADDING]).subarray(0, 32);
}

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest();

/** RC4 (OpenSSL 3 has it only in its legacy provider, so here by hand: it is ten lines). */
function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i += 1) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n += 1) {
    i = (i + 1) & 255;
    j = (j + s[i]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 255]!;
  }
  return out;
}

/** A PDF file of the given objects (numbered from 1, generation 0) with a classic xref table. */
function writePdf(objects: readonly (string | Buffer)[], trailer: string): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  for (const [index, body] of objects.entries()) {
    offsets.push(length);
    const object = Buffer.concat([
      Buffer.from(`${index + 1} 0 obj\n`, 'latin1'),
      typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    parts.push(object);
    length += object.length;
  }
  // Each xref entry is exactly 20 bytes: 10-digit offset, 5-digit generation, type, and a 2-byte end of line.
  const xref = [
    `xref\n0 ${objects.length + 1}\n`,
    '0000000000 65535 f \n',
    ...offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`),
  ].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} ${trailer} >>\nstartxref\n${length}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

// Video

const run = promisify(execFile);

export interface VideoOptions {
  seconds: number;
  width: number;
  height: number;
  /**
   * Container and codecs: webm (VP8 + Vorbis; one of the committed test/fixtures/video files), avi
   * (MPEG-4 Part 2 + MP2), mp4 (H.264 + AAC), mov (H.264, no audio).
   */
  format: 'webm' | 'avi' | 'mp4' | 'mov';
  audio?: boolean;
  /** Display rotation stored in the container (phones record portrait video this way). */
  rotate?: 90 | 180 | 270;
}

/** A test-pattern video (lavfi `testsrc`, with a `sine` tone) made with our ffmpeg build. */
export async function makeVideo(options: VideoOptions): Promise<Buffer> {
  if (options.format === 'webm') return webmFixture(options);
  const dir = await mkdtemp(join(tmpdir(), 'sample-video-'));
  try {
    const file = join(dir, `sample.${options.format}`);
    const audio = options.audio ?? true;
    const codecs = {
      avi: ['-c:v', 'mpeg4', '-q:v', '5', '-c:a', 'mp2'],
      mp4: ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
      mov: ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
    }[options.format];
    await run(ffmpegPath(), [
      '-hide_banner',
      '-nostdin',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc=duration=${options.seconds}:size=${options.width}x${options.height}:rate=25`,
      ...(audio ? ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${options.seconds}`] : []),
      ...codecs,
      '-shortest',
      file,
    ]);
    if (!options.rotate) return await readFile(file);
    // A display matrix, as phones write it, set while the streams are copied; ffmpeg counts its
    // rotation counter-clockwise, ours is clockwise.
    const rotated = join(dir, `rotated.${options.format}`);
    await run(ffmpegPath(), [
      '-hide_banner',
      '-nostdin',
      '-y',
      '-display_rotation',
      String(360 - options.rotate),
      '-i',
      file,
      '-c',
      'copy',
      rotated,
    ]);
    return await readFile(rotated);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A committed WebM test pattern (VP8 + Vorbis at 300 kbit/s, 25 fps, made with FFmpeg 4.1's libvpx
 * and libvorbis; see test/fixtures/video/README.md): the ones there are the only sizes available.
 */
async function webmFixture(options: VideoOptions): Promise<Buffer> {
  if (options.rotate) throw new Error('no rotated WebM fixture');
  const name = `testsrc-${options.width}x${options.height}-${options.seconds}s${options.audio === false ? '-silent' : ''}.webm`;
  return readFile(new URL(`../fixtures/video/${name}`, import.meta.url)).catch((error: unknown) => {
    throw new Error(`no WebM fixture ${name} in test/fixtures/video (our ffmpeg cannot encode VP8)`, { cause: error });
  });
}

// Corrupt files

/** Bytes that start like a file of `kind` and then are garbage. */
export function corruptFile(kind: 'tiff' | 'psd' | 'eps' | 'pdf' | 'video'): Buffer {
  const start = {
    tiff: 'II*\0\x08\0\0\0',
    psd: '8BPS\0\x01',
    eps: '%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n(unterminated',
    pdf: '%PDF-1.7\n',
    video: '\0\0\0\x20ftypisom',
  }[kind];
  // Seeded by the kind so a failing run can be reproduced byte for byte.
  const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + kind.length * 17) % 251));
  return Buffer.concat([Buffer.from(start, 'latin1'), garbage]);
}

/** Random bytes, for a source nothing recognises. */
export const randomFile = (length = 2048) => randomBytes(length);
