import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { ConversionError } from './errors.js';
import { fitPng, MAX_PAGE_DIMENSION, type ConverterInput, type RenderedImage } from './images.js';
import { ghostscriptModuleUrl } from './packages.js';

export interface EpsOptions {
  /** Rendering resolution; lowered when the page would exceed `maxDimension`. */
  dpi?: number;
  maxDimension?: number;
  /** PostScript is a programming language: a file may loop forever, so rendering is stopped after this. */
  timeoutMs?: number;
}

/** Print resolution: a 200 x 100 pt logo becomes 833 x 417 px, an A4 page 2481 x 3508 px. */
export const EPS_DPI = 300;
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Renders an EPS (or a PostScript file) with Ghostscript into PNGs on white, cropped to its
 * bounding box (`-dEPSCrop`), one per page (an EPS has one). Ghostscript runs in a worker thread
 * with a fresh WASM instance per file: a runaway program is stopped by terminating the thread, and
 * the WASM memory it grew is released with it.
 */
export async function convertEps(input: ConverterInput, options: EpsOptions = {}): Promise<RenderedImage[]> {
  const bytes = typeof input === 'string' ? await readFile(input) : input;
  const maxDimension = options.maxDimension ?? MAX_PAGE_DIMENSION;
  const box = boundingBox(bytes);
  let dpi = options.dpi ?? EPS_DPI;
  if (box) dpi = Math.min(dpi, (maxDimension * 72) / Math.max(box.width, box.height, 1));
  dpi = Math.max(1, Math.floor(dpi * 100) / 100);
  const args = [
    '-q',
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-dNOINTERPOLATE',
    '-dEPSCrop',
    '-sDEVICE=png16m',
    `-r${dpi}`,
    '-dTextAlphaBits=4',
    '-dGraphicsAlphaBits=4',
    '-sOutputFile=/out/page-%03d.png',
    '/input.eps',
  ];
  const result = await runGhostscript(bytes, args, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  if (result.pages.length === 0) {
    const reason = ghostscriptReason(result.log);
    throw new ConversionError(`The EPS file could not be rendered${reason ? `: ${reason}` : '.'}`);
  }
  const pages: RenderedImage[] = [];
  for (const page of result.pages) {
    const data = Buffer.from(page.buffer, page.byteOffset, page.byteLength);
    if (data.length < 24 || data.toString('latin1', 1, 4) !== 'PNG') throw new ConversionError('The EPS file could not be rendered.');
    pages.push(await fitPng({ data, mimeType: 'image/png', width: data.readUInt32BE(16), height: data.readUInt32BE(20) }, maxDimension));
  }
  return pages;
}

/** The `%%HiResBoundingBox` (else `%%BoundingBox`) of the PostScript header, in points. */
export function boundingBox(bytes: Buffer): { width: number; height: number } | undefined {
  let text = bytes;
  // DOS EPS binary header: the PostScript section's offset and length follow the magic number.
  if (bytes.length >= 12 && bytes.readUInt32BE(0) === 0xc5d0d3c6) text = bytes.subarray(bytes.readUInt32LE(4), bytes.readUInt32LE(4) + bytes.readUInt32LE(8));
  const head = text.subarray(0, 64 * 1024).toString('latin1');
  for (const comment of ['%%HiResBoundingBox:', '%%BoundingBox:']) {
    const match = new RegExp(`^${comment}\\s*(-?[\\d.]+)\\s+(-?[\\d.]+)\\s+(-?[\\d.]+)\\s+(-?[\\d.]+)`, 'm').exec(head);
    if (match) {
      const [x0, y0, x1, y1] = match.slice(1).map(Number) as [number, number, number, number];
      if ([x0, y0, x1, y1].every(Number.isFinite) && x1 > x0 && y1 > y0) return { width: x1 - x0, height: y1 - y0 };
    }
  }
  return undefined;
}

/** What Ghostscript said went wrong, in words fit for a user (file bytes echoed in its log are left out). */
function ghostscriptReason(log: string[]): string | undefined {
  for (const line of log) {
    const error = /^\s*Error: \/(\w+)/.exec(line);
    if (error) return `PostScript error /${error[1]}`;
  }
  if (log.some((line) => /Unrecoverable error/.test(line))) return 'Ghostscript stopped with an unrecoverable error';
  return undefined;
}

interface GhostscriptResult {
  code: number;
  log: string[];
  pages: Uint8Array[];
}

/**
 * Plain JavaScript run in the worker (`eval`, so it works the same from TypeScript sources under
 * tsx or vitest and from an esbuild bundle): loads Ghostscript's Emscripten module, renders, and
 * posts back the exit code, the last lines of output and the PNG files.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const log = [];
  const { default: load } = await import(workerData.moduleUrl);
  const gs = await load({ print: (line) => log.push(line), printErr: (line) => log.push(line) });
  gs.FS.mkdir('/out');
  gs.FS.writeFile('/input.eps', workerData.input);
  let code;
  try {
    code = gs.callMain(workerData.args);
  } catch (error) {
    code = typeof error?.status === 'number' ? error.status : -1;
    log.push(String(error?.message ?? error));
  }
  const pages = gs.FS.readdir('/out').filter((name) => name.endsWith('.png')).sort().map((name) => gs.FS.readFile('/out/' + name));
  parentPort.postMessage({ code, log: log.slice(-50), pages }, pages.map((page) => page.buffer));
})().catch((error) => parentPort.postMessage({ code: -1, log: [String(error?.stack ?? error)], pages: [] }));
`;

async function runGhostscript(input: Buffer, args: string[], timeoutMs: number): Promise<GhostscriptResult> {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { moduleUrl: ghostscriptModuleUrl(), input, args }, stdout: true, stderr: true });
  try {
    return await new Promise<GhostscriptResult>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ConversionError(`The EPS file took longer than ${Math.round(timeoutMs / 1000)} s to render.`)), timeoutMs);
      worker.once('message', (message: GhostscriptResult) => {
        clearTimeout(timer);
        resolve(message);
      });
      worker.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      worker.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the Ghostscript worker exited with code ${code} before answering`));
      });
    });
  } finally {
    await worker.terminate();
  }
}
