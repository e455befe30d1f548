import { accessSync, chmodSync, constants, copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as AgPsd from 'ag-psd';
import type * as Mupdf from 'mupdf';
import type SharpModule from 'sharp';
import { logger } from '../logger.js';

/**
 * The native and WASM packages the converters use, loaded on first use and resolved at run time.
 *
 * - Never at module load: mupdf instantiates a 14 MB WASM module with top-level await, and a cold
 *   start of a function that merely imports this folder must not pay for it.
 * - Resolved through `require.resolve` rather than a bare `import`, so esbuild leaves them out of the
 *   bundle (their native binary and `.wasm` files must stay next to their own code) and so a
 *   deployed function finds them in a layer: ES module resolution ignores `NODE_PATH`
 *   (/opt/nodejs/node_modules on Lambda), CommonJS resolution honours it.
 */
const require = createRequire(import.meta.url);

export type Sharp = typeof SharpModule;
export type MupdfModule = typeof Mupdf;
export type AgPsdModule = typeof AgPsd;
type ImageDataFactory = NonNullable<Parameters<AgPsdModule['initializeCanvas']>[1]>;

let sharpModule: Sharp | undefined;
let mupdfModule: Promise<MupdfModule> | undefined;
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
      (width, height) => ({ width, height, data: new Uint8ClampedArray(width * height * 4), colorSpace: 'srgb' }) as ReturnType<ImageDataFactory>,
    );
    agPsdModule = agPsd;
  }
  return agPsdModule;
}

export function loadMupdf(): Promise<MupdfModule> {
  mupdfModule ??= (import(pathToFileURL(require.resolve('mupdf')).href) as Promise<MupdfModule>).then((mupdf) => {
    // Warnings about repaired files would otherwise go straight to stderr; failures surface as exceptions.
    mupdf.setLog((message) => logger.debug('mupdf', { message }));
    return mupdf;
  });
  return mupdfModule;
}

/** File URL of Ghostscript's Emscripten module; it runs in a worker thread (see eps.ts). */
export function ghostscriptModuleUrl(): string {
  return pathToFileURL(require.resolve('@okathira/ghostpdl-wasm')).href;
}

let ffmpegBinary: string | undefined;

/**
 * Path of the static ffmpeg binary of @ffmpeg-installer (x86-64 Linux in node_modules). A layer's
 * files are read-only and keep the modes they were zipped with; should the executable bit have been
 * lost on the way, a copy in /tmp is made executable once.
 */
export function ffmpegPath(): string {
  if (ffmpegBinary) return ffmpegBinary;
  const installed = (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
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
