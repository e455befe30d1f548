import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { ConversionError } from './errors.js';
import { fitPng, MAX_PAGE_DIMENSION, type ConverterInput, type RenderedImage } from './images.js';
import { ghostscriptModuleUrl } from './packages.js';

export interface EpsOptions {
  /**
   * Whether the operator enabled the optional Ghostscript converter (`EPS_CONVERTER=ghostscript`,
   * CDK context `epsConverter`). Off, or with the package not installed, an EPS fails with
   * {@link EPS_NOT_ENABLED}.
   */
  enabled: boolean;
  /** Rendering resolution; lowered when the page would exceed `maxDimension`. */
  dpi?: number;
  maxDimension?: number;
  /** PostScript is a programming language: a file may loop forever, so rendering is stopped after this. */
  timeoutMs?: number;
}

/** Print resolution: a 200 x 100 pt logo becomes 833 x 417 px, an A4 page 2481 x 3508 px. */
export const EPS_DPI = 300;
const DEFAULT_TIMEOUT_MS = 60_000;

/** The final reason of an EPS markup when the optional converter is not enabled (or not installed). */
export const EPS_NOT_ENABLED =
  'EPS files are not converted by this service: its optional Ghostscript converter (AGPL-3.0) is not enabled. Export the file as PDF or PNG and upload that.';

/**
 * Renders an EPS (or a PostScript file) with Ghostscript into PNGs on white, cropped to its
 * bounding box (`-dEPSCrop`), one per page (an EPS has one). Ghostscript (AGPL-3.0, the optional
 * @okathira/ghostpdl-wasm installed by `npm run converters:eps`) runs in a separate Node process
 * with a fresh WASM instance per file: a runaway program is stopped by killing the process, and
 * the memory it grew is released with it.
 */
export async function convertEps(input: ConverterInput, options: EpsOptions): Promise<RenderedImage[]> {
  const moduleUrl = options.enabled ? ghostscriptModuleUrl() : undefined;
  if (!moduleUrl) throw new ConversionError(EPS_NOT_ENABLED);
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
  const result = await runGhostscript(moduleUrl, bytes, args, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
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
  if (bytes.length >= 12 && bytes.readUInt32BE(0) === 0xc5d0d3c6)
    text = bytes.subarray(bytes.readUInt32LE(4), bytes.readUInt32LE(4) + bytes.readUInt32LE(8));
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
 * Plain JavaScript run by the child Node process (`node -e`, so it works the same from TypeScript
 * sources under tsx or vitest and from an esbuild bundle): receives the module URL, the file and the
 * arguments over IPC, loads Ghostscript's Emscripten module, renders, and sends back the exit code,
 * the last lines of output and the PNG files (advanced serialization carries the Uint8Arrays). It
 * then waits to be killed; should its parent go away first, the closed channel ends it.
 */
const CHILD_SOURCE = `
process.once('disconnect', () => process.exit(0));
process.once('message', async ({ moduleUrl, input, args }) => {
  const log = [];
  let result;
  try {
    const { default: load } = await import(moduleUrl);
    const gs = await load({ print: (line) => log.push(line), printErr: (line) => log.push(line) });
    gs.FS.mkdir('/out');
    gs.FS.writeFile('/input.eps', input);
    let code;
    try {
      code = gs.callMain(args);
    } catch (error) {
      code = typeof error?.status === 'number' ? error.status : -1;
      log.push(String(error?.message ?? error));
    }
    const pages = gs.FS.readdir('/out').filter((name) => name.endsWith('.png')).sort().map((name) => gs.FS.readFile('/out/' + name));
    result = { code, log: log.slice(-50), pages };
  } catch (error) {
    result = { code: -1, log: [...log.slice(-49), String(error?.stack ?? error)], pages: [] };
  }
  process.send(result);
});
`;

/** The last characters of the child's stderr kept for an error message (a crash, an out-of-memory abort). */
const STDERR_TAIL = 2000;

/**
 * Runs Ghostscript in a child Node process (`process.execPath`: the same node binary, on Lambda
 * too), so the AGPL Ghostscript program is never linked into the worker's own process, and a
 * runaway program is stopped by SIGKILL, releasing all the memory it grew. The child gets an empty
 * environment: it needs no credential and no setting, only what it is sent.
 */
async function runGhostscript(moduleUrl: string, input: Buffer, args: string[], timeoutMs: number): Promise<GhostscriptResult> {
  const child = spawn(process.execPath, ['-e', CHILD_SOURCE], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'advanced',
    env: {},
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  try {
    return await new Promise<GhostscriptResult>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new ConversionError(`The EPS file took longer than ${Math.round(timeoutMs / 1000)} s to render.`)),
        timeoutMs,
      );
      child.once('message', (message: GhostscriptResult) => {
        clearTimeout(timer);
        resolve(message);
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new Error(`the Ghostscript process exited (${signal ?? `code ${code}`}) before answering${stderr ? `: ${stderr.trim()}` : ''}`),
        );
      });
      child.send({ moduleUrl, input, args }, (error) => {
        if (error) {
          clearTimeout(timer);
          reject(error);
        }
      });
    });
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
