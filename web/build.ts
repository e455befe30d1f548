import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';

/**
 * Builds the review app (web/app, Preact + TSX) with esbuild into `web/dist`: `assets/` holds the
 * hashed script and stylesheet (cached for a year wherever they are served), `index.html` links
 * them with no inline script or style, so the Content-Security-Policy needs no `unsafe-*`; the
 * embeddable client (web/embed) is one unhashed module, `embed/v1/review-board.js`.
 *
 * `ensureWebBuilt()` builds only when the sources changed since the last build (a digest of them is
 * kept in `dist/.build-digest`): `npm start`, the tests and `cdk synth` call it, so nobody runs a
 * separate build step. It is synchronous because `cdk synth` is. Several processes may build at
 * once (test workers): every file is written to a temporary name and renamed into place, and two
 * builds of the same sources write the same bytes.
 */
const WEB_DIR = dirname(fileURLToPath(import.meta.url));
export const WEB_DIST = join(WEB_DIR, 'dist');
export const WEB_ASSETS_DIR = 'assets';
const SOURCE_DIRS = ['app', 'board', 'embed', 'anchoring', 'live'].map((name) => join(WEB_DIR, name));
const ENTRY = join(WEB_DIR, 'app', 'main.tsx');
/** The embeddable client (DESIGN.md "Embeddable client"): one ES module at a fixed, versioned path. */
const EMBED_ENTRY = join(WEB_DIR, 'embed', 'main.tsx');
export const EMBED_SCRIPT = 'embed/v1/review-board.js';
const HTML_TEMPLATE = join(WEB_DIR, 'app', 'index.html');
const FAVICON = 'favicon.svg';
const DIGEST_FILE = '.build-digest';

export interface WebBuild {
  outdir: string;
  /** Paths under `outdir` of the files `index.html` loads, scripts first. */
  scripts: string[];
  styles: string[];
  built: boolean;
}

function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) walk(dir);
  return [...files, fileURLToPath(import.meta.url)].sort();
}

/** What the build depends on: its sources, this builder, and the UI library's version. */
function sourceDigest(): string {
  const hash = createHash('sha256');
  for (const file of sourceFiles()) hash.update(relative(WEB_DIR, file)).update('\0').update(readFileSync(file)).update('\0');
  hash.update(readFileSync(resolvePackageFile('preact/package.json')));
  return hash.digest('hex');
}

function resolvePackageFile(specifier: string): string {
  return createRequire(ENTRY).resolve(specifier);
}

function writeAtomically(path: string, contents: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

/** Builds into `outdir` (default web/dist) and answers what index.html loads. */
export function buildWeb(options: { outdir?: string } = {}): WebBuild {
  const outdir = resolve(options.outdir ?? WEB_DIST);
  const digest = sourceDigest();
  const result = buildSync({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'linked',
    entryNames: `${WEB_ASSETS_DIR}/[name]-[hash]`,
    assetNames: `${WEB_ASSETS_DIR}/[name]-[hash]`,
    outdir,
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const scripts: string[] = [];
  const styles: string[] = [];
  const keep = new Set<string>();
  for (const file of result.outputFiles) {
    const path = relative(outdir, file.path).split('\\').join('/');
    writeAtomically(file.path, file.contents);
    keep.add(path);
    if (path.endsWith('.js')) scripts.push(path);
    if (path.endsWith('.css')) styles.push(path);
  }
  // The embed client: one self-contained module (no chunks, no stylesheet file: its CSS is text it
  // puts into constructable stylesheets of its shadow root), at a path customers' pages link to.
  const embed = buildSync({
    entryPoints: [EMBED_ENTRY],
    bundle: true,
    format: 'esm',
    target: ['es2020', 'chrome100', 'firefox100', 'safari16'],
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'eof',
    loader: { '.css': 'text' },
    write: false,
    logLevel: 'error',
  });
  writeAtomically(join(outdir, EMBED_SCRIPT), embed.outputFiles[0]!.contents);
  // The tab's icon (index.html links it; without one browsers ask for /favicon.ico and log a 404 on every page).
  writeAtomically(join(outdir, FAVICON), readFileSync(join(WEB_DIR, 'app', FAVICON)));
  const html = readFileSync(HTML_TEMPLATE, 'utf8')
    .replace('<!-- styles -->', styles.map((path) => `<link rel="stylesheet" href="/${path}">`).join('\n    '))
    .replace('<!-- scripts -->', scripts.map((path) => `<script type="module" src="/${path}"></script>`).join('\n    '));
  writeAtomically(join(outdir, 'index.html'), html);
  // Old hashed files go: what is deployed keeps them (the bucket is never pruned), the build directory need not.
  const assets = join(outdir, WEB_ASSETS_DIR);
  for (const name of readdirSync(assets)) {
    const path = `${WEB_ASSETS_DIR}/${name}`;
    if (!keep.has(path) && !name.endsWith('.tmp') && statSync(join(assets, name)).isFile()) rmSync(join(assets, name), { force: true });
  }
  writeAtomically(join(outdir, DIGEST_FILE), `${digest}\n`);
  return { outdir, scripts, styles, built: true };
}

/** Builds web/dist unless it is already built from the current sources; answers where it is. */
export function ensureWebBuilt(): string {
  const digestFile = join(WEB_DIST, DIGEST_FILE);
  const current = existsSync(digestFile) && existsSync(join(WEB_DIST, 'index.html')) ? readFileSync(digestFile, 'utf8').trim() : undefined;
  if (current !== sourceDigest()) buildWeb();
  return WEB_DIST;
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(resolve(invokedPath)).href) {
  const started = performance.now();
  const build = buildWeb();
  process.stdout.write(
    `web: built ${[...build.scripts, ...build.styles].join(', ')} into ${relative(process.cwd(), build.outdir)} in ${Math.round(performance.now() - started)} ms\n`,
  );
}
