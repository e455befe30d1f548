import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { AssetHashType, DockerImage, Stack } from 'aws-cdk-lib';
import { Architecture, Code, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { GHOSTSCRIPT_PACKAGE, LOCAL_FFMPEG } from '../../shared/convert/packages.js';
import { buildFfmpegNow, ffmpegBuildId } from '../tools/ffmpeg.js';

/**
 * The packages the conversion worker loads at run time (shared/convert/packages.ts resolves them
 * through NODE_PATH, which on Lambda includes /opt/nodejs/node_modules), with what each may drop.
 * Native parts are the x64 builds npm installed here, hence an x86-64 layer.
 */
export const CONVERTER_PACKAGES: readonly { name: string; exclude?: RegExp }[] = [
  { name: 'sharp', exclude: /^(src|install)(\/|$)/ },
  { name: '@img/sharp-linux-x64' },
  { name: '@img/sharp-libvips-linux-x64' },
  { name: '@img/colour' },
  { name: 'detect-libc' },
  { name: 'semver' },
  // PDF renders with PDFium; its browser bundle and source maps are not loaded in Node.
  { name: '@embedpdf/pdfium', exclude: /^dist\/(index\.browser\.js|.*\.map)$/ },
  // ag-psd (MIT) reads the layers of PSDs saved without a merged image; base64-js and pako are its dependencies.
  { name: 'ag-psd', exclude: /^(dist-es|src|\.v8-cache)(\/|$)|\.(map|ts)$|^dist\/bundle\.js$/ },
  { name: 'base64-js' },
  { name: 'pako' },
];

/**
 * Where the layer puts ffmpeg (the static FFmpeg 7.1 build of infra/tools/build-ffmpeg.sh, which
 * synth copies from .converters/ffmpeg, building it first when it is missing or stale): functions
 * with the layer get it as FFMPEG_PATH.
 */
export const FFMPEG_LAYER_PATH = '/opt/ffmpeg/bin/ffmpeg';

/**
 * The optional EPS converter (Ghostscript as WASM, AGPL-3.0): not a dependency, so not in the
 * lockfile; `npm run converters:eps` installs it and CDK context `epsConverter=true` ships it. The
 * types are not needed at run time.
 */
export const EPS_CONVERTER_PACKAGE = { name: GHOSTSCRIPT_PACKAGE, exclude: /^types(\/|$)/ } as const;

export interface ConvertersLayerOptions {
  /** Ship the optional EPS converter (context `epsConverter`); synth fails if it is not installed. */
  readonly epsConverter?: boolean;
}

/**
 * A layer staged from the installed packages at synth time (a local copy, no Docker and no network).
 * Its hash comes from the locked versions, so an unchanged lockfile reuses the uploaded layer. With
 * the EPS converter off, the layer (its files, hash and description) is exactly the default one.
 */
export function convertersLayer(scope: Construct, repoRoot: string, options: ConvertersLayerOptions = {}): LayerVersion {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild('ConvertersLayer');
  if (existing) return existing as LayerVersion;
  const versions = lockedVersions(
    repoRoot,
    CONVERTER_PACKAGES.map(({ name }) => name),
  );
  const packages: readonly { name: string; exclude?: RegExp }[] = options.epsConverter
    ? [...CONVERTER_PACKAGES, EPS_CONVERTER_PACKAGE]
    : CONVERTER_PACKAGES;
  if (options.epsConverter) {
    const manifest = join(repoRoot, 'node_modules', EPS_CONVERTER_PACKAGE.name, 'package.json');
    if (!existsSync(manifest))
      throw new Error(`epsConverter is on but ${EPS_CONVERTER_PACKAGE.name} is not installed: run npm run converters:eps before synth`);
    versions.push(
      `${EPS_CONVERTER_PACKAGE.name}@${(JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version ?? 'unknown'}`,
    );
  }
  const ffmpeg = join(repoRoot, LOCAL_FFMPEG);
  // The build id is the SHA-256 of the build script (its versions and flags), which is what
  // .converters/ffmpeg/BUILD holds once built: the hash needs no binary, so a synth that stages no
  // asset (bundling skipped) needs no build either.
  versions.push(`ffmpeg@${ffmpegBuildId(repoRoot)}`);
  const hash = createHash('sha256').update(versions.join('\n')).digest('hex');
  return new LayerVersion(stack, 'ConvertersLayer', {
    code: stagedLayerCode(repoRoot, hash, (outputDir) => {
      // npm ci does not build ffmpeg: the first synth that stages the layer does (or waits for a build under way).
      buildFfmpegNow(repoRoot);
      copyPackages(repoRoot, packages, outputDir);
      // FFMPEG_LAYER_PATH, with FFmpeg's licence (GPL-2.0-or-later) beside it.
      cpSync(dirname(dirname(ffmpeg)), join(outputDir, relative('/opt', dirname(dirname(FFMPEG_LAYER_PATH)))), { recursive: true });
    }),
    compatibleArchitectures: [Architecture.X86_64],
    // A layer description holds at most 256 characters: name the tools, not every package.
    description: `Converters (sharp, pdfium, ag-psd, ffmpeg${options.epsConverter ? ', ghostpdl-wasm' : ''}) for the conversion worker; lock ${hash.slice(0, 12)}`,
  });
}

/**
 * Copies installed packages into a layer's `nodejs/node_modules` (on Lambda's NODE_PATH), each
 * without the files its `exclude` matches (paths relative to the package).
 */
export function copyPackages(repoRoot: string, packages: readonly { name: string; exclude?: RegExp }[], outputDir: string): void {
  for (const { name, exclude } of packages) {
    const from = join(repoRoot, 'node_modules', name);
    if (!existsSync(from)) throw new Error(`${name} is not installed; run npm ci before synth.`);
    cpSync(from, join(outputDir, 'nodejs', 'node_modules', name), {
      recursive: true,
      filter: (source) => !exclude?.test(source.slice(from.length + 1)),
    });
  }
}

/** `name@version` of each package as the lockfile pins it: what a staged layer's hash is made of. */
export function lockedVersions(repoRoot: string, names: readonly string[]): string[] {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  return names.map((name) => `${name}@${lock.packages[`node_modules/${name}`]?.version ?? 'missing'}`);
}

/**
 * A layer's code staged at synth by `stage` into the asset folder (a local copy: no Docker, no
 * network), keyed by `hash`, so an unchanged hash reuses the uploaded layer.
 */
export function stagedLayerCode(repoRoot: string, hash: string, stage: (outputDir: string) => void): Code {
  return Code.fromAsset(repoRoot, {
    assetHashType: AssetHashType.CUSTOM,
    assetHash: hash,
    bundling: {
      image: DockerImage.fromRegistry('unused-local-bundling-only'),
      local: {
        tryBundle(outputDir: string): boolean {
          stage(outputDir);
          return true;
        },
      },
    },
  });
}
