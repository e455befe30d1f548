import { accessSync, chmodSync, constants, copyFileSync, existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WrappedPdfiumModule } from '@embedpdf/pdfium';
import type * as AgPsd from 'ag-psd';
import type SharpModule from 'sharp';
import { getConfig } from '../config.js';
import { logger } from '../logger.js';
import { ConversionError } from './errors.js';

/**
 * The native and WASM packages the converters use, loaded on first use and resolved at run time.
 *
 * - Never at module load: PDFium instantiates a 4.6 MB WASM module and ag-psd is 700 KB of code,
 *   and a cold start of a function that merely imports this folder must not pay for it.
 * - Resolved through `require.resolve` rather than a bare `import`, so esbuild leaves them out of the
 *   bundle (their native binary and `.wasm` files must stay next to their own code) and so a
 *   deployed function finds them in a layer: ES module resolution ignores `NODE_PATH`
 *   (/opt/nodejs/node_modules on Lambda), CommonJS resolution honours it.
 */
const require = createRequire(import.meta.url);

export type Sharp = typeof SharpModule;
export type PdfiumModule = WrappedPdfiumModule;
export type AgPsdModule = typeof AgPsd;
type ImageDataFactory = NonNullable<Parameters<AgPsdModule['initializeCanvas']>[1]>;

let sharpModule: Sharp | undefined;
let pdfiumModule: Promise<PdfiumModule> | undefined;
let agPsdModule: AgPsdModule | undefined;

export function loadSharp(): Sharp {
  if (!sharpModule) {
    sharpModule = require('sharp') as Sharp;
    // One file at a time per worker: libvips' operation cache would only hold memory between jobs.
    sharpModule.cache(false);
  }
  return sharpModule;
}

/**
 * ag-psd (MIT) reads the layers of Photoshop documents saved without a merged image. It draws on
 * an HTML canvas unless told to keep plain pixel arrays (`useImageData`); it is given a factory of
 * such arrays and a canvas factory that refuses, as no canvas package is installed.
 */
export function loadAgPsd(): AgPsdModule {
  if (!agPsdModule) {
    const agPsd = require('ag-psd') as AgPsdModule;
    agPsd.initializeCanvas(
      () => {
        throw new Error('ag-psd asked for a canvas, which the conversion worker does not have');
      },
      (width, height) =>
        ({ width, height, data: new Uint8ClampedArray(width * height * 4), colorSpace: 'srgb' }) as ReturnType<ImageDataFactory>,
    );
    agPsdModule = agPsd;
  }
  return agPsdModule;
}

/**
 * PDFium (@embedpdf/pdfium: Apache-2.0 PDFium compiled to WebAssembly, MIT wrapper), instantiated
 * once per process with its library initialised. The `.wasm` file is read from the package itself
 * (the package would otherwise look for it next to its ES module, or on a CDN in a browser). An
 * aborted module (out of WASM memory, a failed assertion) cannot be used again, so the next call
 * instantiates a fresh one.
 */
export function loadPdfium(): Promise<PdfiumModule> {
  pdfiumModule ??= (async () => {
    const { init } = require('@embedpdf/pdfium') as typeof import('@embedpdf/pdfium');
    const wasmBinary = readFileSync(require.resolve('@embedpdf/pdfium/pdfium.wasm'));
    const pdfium = await init({
      wasmBinary: wasmBinary.buffer.slice(wasmBinary.byteOffset, wasmBinary.byteOffset + wasmBinary.byteLength),
      print: (message: string) => logger.debug('pdfium', { message }),
      printErr: (message: string) => logger.debug('pdfium', { message }),
      onAbort: () => {
        pdfiumModule = undefined;
      },
    });
    pdfium.PDFiumExt_Init();
    return pdfium;
  })().catch((error: unknown) => {
    pdfiumModule = undefined;
    throw error;
  });
  return pdfiumModule;
}

/** The optional EPS converter's package (AGPL-3.0): not a dependency; `npm run converters:eps` installs it. */
export const GHOSTSCRIPT_PACKAGE = '@okathira/ghostpdl-wasm';

/**
 * File URL of Ghostscript's Emscripten module, which runs in a separate process (see eps.ts), or
 * undefined when the optional package is not installed.
 */
export function ghostscriptModuleUrl(): string | undefined {
  try {
    return pathToFileURL(require.resolve(GHOSTSCRIPT_PACKAGE)).href;
  } catch {
    return undefined;
  }
}

/** Where infra/tools/build-ffmpeg.sh puts its build, relative to the repository root. */
export const LOCAL_FFMPEG = '.converters/ffmpeg/bin/ffmpeg';

/** The final reason of a video when no ffmpeg is installed (a local checkout that never built it). */
export const FFMPEG_MISSING =
  'Videos are not converted here: ffmpeg is not installed. Run npm run converters:ffmpeg (infra/tools/build-ffmpeg.sh) and upload the video again.';

let ffmpegBinary: string | undefined;

/**
 * Locally only: where ffmpeg comes from while the local stack builds it (infra/local/ffmpeg.ts).
 * `binary()` answers the binary once it is there; it rejects with a ConversionError when the build
 * failed, with another error when the stack stopped meanwhile (the job is then retried).
 */
export interface LocalFfmpeg {
  binary(): Promise<string>;
}

let localFfmpeg: LocalFfmpeg | undefined;

/** Set by the local stack when it starts (undefined when it stops); never set deployed. */
export function useLocalFfmpeg(source: LocalFfmpeg | undefined): void {
  localFfmpeg = source;
  ffmpegBinary = undefined;
}

/**
 * ffmpegPath(), but locally, while the local stack is still building ffmpeg, once the build is done:
 * a video uploaded meanwhile waits instead of failing. Deployed (FFMPEG_PATH) it is ffmpegPath().
 */
export async function readyFfmpegPath(): Promise<string> {
  if (getConfig().ffmpegPath || !localFfmpeg) return ffmpegPath();
  return localFfmpeg.binary();
}

/**
 * Path of the ffmpeg the video converter runs: FFmpeg 7.1 with x264, a static binary built from
 * Debian's sources by infra/tools/build-ffmpeg.sh. Deployed, the converters layer's (FFMPEG_PATH);
 * locally, the repository's build, found above this module (also from an esbuild bundle under
 * the repository). A layer's files keep the modes they were zipped with; should the executable
 * bit have been lost on the way, a copy in /tmp is made executable once.
 */
export function ffmpegPath(): string {
  if (ffmpegBinary) return ffmpegBinary;
  const installed = getConfig().ffmpegPath ?? findUpwards(LOCAL_FFMPEG);
  if (!installed) throw new ConversionError(FFMPEG_MISSING);
  try {
    accessSync(installed, constants.X_OK);
    ffmpegBinary = installed;
  } catch {
    const copy = join(tmpdir(), 'ffmpeg');
    copyFileSync(installed, copy);
    chmodSync(copy, 0o755);
    ffmpegBinary = copy;
  }
  return ffmpegBinary;
}

function findUpwards(relative: string): string | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}
