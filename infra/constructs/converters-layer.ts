import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AssetHashType, DockerImage, Stack } from 'aws-cdk-lib';
import { Architecture, Code, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

/**
 * The packages the conversion worker loads at run time (shared/convert/packages.ts resolves them
 * through NODE_PATH, which on Lambda includes /opt/nodejs/node_modules), with what each may drop.
 * Native parts are the x64 builds npm installed here, hence an x86-64 layer.
 */
export const CONVERTER_PACKAGES: readonly { name: string; exclude?: RegExp }[] = [
  { name: '@ffmpeg-installer/ffmpeg' },
  { name: '@ffmpeg-installer/linux-x64' },
  { name: 'sharp', exclude: /^(src|install)(\/|$)/ },
  { name: '@img/sharp-linux-x64' },
  { name: '@img/sharp-libvips-linux-x64' },
  { name: '@img/colour' },
  { name: 'detect-libc' },
  { name: 'semver' },
  { name: 'mupdf', exclude: /^dist\/.*\.br$/ },
  // ag-psd (MIT) reads the layers of PSDs saved without a merged image; base64-js and pako are its dependencies.
  { name: 'ag-psd', exclude: /^(dist-es|src|\.v8-cache)(\/|$)|\.(map|ts)$|^dist\/bundle\.js$/ },
  { name: 'base64-js' },
  { name: 'pako' },
  { name: '@okathira/ghostpdl-wasm' },
];

/**
 * A layer staged from the installed packages at synth time (a local copy, no Docker and no network).
 * Its hash comes from the locked versions, so an unchanged lockfile reuses the uploaded layer.
 */
export function convertersLayer(scope: Construct, repoRoot: string): LayerVersion {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild('ConvertersLayer');
  if (existing) return existing as LayerVersion;
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const versions = CONVERTER_PACKAGES.map(({ name }) => `${name}@${lock.packages[`node_modules/${name}`]?.version ?? 'missing'}`);
  return new LayerVersion(stack, 'ConvertersLayer', {
    code: Code.fromAsset(repoRoot, {
      assetHashType: AssetHashType.CUSTOM,
      assetHash: createHash('sha256').update(versions.join('\n')).digest('hex'),
      bundling: {
        image: DockerImage.fromRegistry('unused-local-bundling-only'),
        local: {
          tryBundle(outputDir: string): boolean {
            for (const { name, exclude } of CONVERTER_PACKAGES) {
              const from = join(repoRoot, 'node_modules', name);
              if (!existsSync(from)) throw new Error(`${name} is not installed; run npm ci before synth.`);
              cpSync(from, join(outputDir, 'nodejs', 'node_modules', name), {
                recursive: true,
                filter: (source) => !exclude?.test(source.slice(from.length + 1)),
              });
            }
            return true;
          },
        },
      },
    }),
    compatibleArchitectures: [Architecture.X86_64],
    // A layer description holds at most 256 characters: name the tools, not every package.
    description: `Converters (sharp, ag-psd, mupdf, ghostpdl-wasm, ffmpeg) for the conversion worker; lock ${createHash('sha256').update(versions.join('\n')).digest('hex').slice(0, 12)}`,
  });
}
