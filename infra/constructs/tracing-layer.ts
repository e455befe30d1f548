import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve as resolvePath } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Architecture, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { copyPackages, lockedVersions, stagedLayerCode } from './converters-layer.js';

const TYPES_ONLY = /^(@types\/|undici-types$)/;

/** The package shared/tracing.ts loads when tracing is on; the layer holds it and what it needs. */
export const TRACER_PACKAGE = '@aws-lambda-powertools/tracer';

/**
 * The top-level packages of node_modules that `root` needs at run time, itself included: its
 * `dependencies`, theirs, and so on, each resolved as Node resolves it (the nearest node_modules
 * first). A package npm nested under another's node_modules travels with that package's folder.
 */
export function dependencyClosure(repoRoot: string, root: string): string[] {
  const top = resolvePath(repoRoot);
  const topLevel = join(top, 'node_modules');
  const copied = new Set<string>();
  const visited = new Set<string>();
  // As Node resolves: the node_modules of the package's folder, then of each folder above it, up to the repository's.
  const resolve = (name: string, fromDir: string): string => {
    for (let dir = fromDir; dir.startsWith(top); dir = dirname(dir)) {
      if (basename(dir) === 'node_modules') continue;
      const candidate = join(dir, 'node_modules', name);
      if (existsSync(join(candidate, 'package.json'))) return candidate;
      if (dir === top) break;
    }
    throw new Error(`${name} is not installed (needed by ${root}); run npm ci before synth.`);
  };
  const visit = (packageDir: string) => {
    if (visited.has(packageDir)) return;
    visited.add(packageDir);
    const relativeDir = packageDir.slice(topLevel.length + 1);
    if (!relativeDir.includes('/node_modules/')) copied.add(relativeDir);
    const { dependencies = {} } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    // Type declarations (aws-xray-sdk-core lists @types/cls-hooked, which pulls @types/node) never run.
    for (const dependency of Object.keys(dependencies).filter((name) => !TYPES_ONLY.test(name))) visit(resolve(dependency, packageDir));
  };
  visit(resolve(root, topLevel));
  return [...copied].sort();
}

/**
 * The tracing layer (context `tracing`): Powertools' Tracer and the X-Ray SDK, staged from the
 * installed packages at synth like the converters layer, for every function of a stack when tracing
 * is on. Its hash comes from the locked versions of what it holds. Architecture-independent
 * (JavaScript only).
 */
export function tracingLayer(scope: Construct, repoRoot: string): LayerVersion {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild('TracingLayer');
  if (existing) return existing as LayerVersion;
  const names = dependencyClosure(repoRoot, TRACER_PACKAGE);
  const hash = createHash('sha256').update(lockedVersions(repoRoot, names).join('\n')).digest('hex');
  return new LayerVersion(stack, 'TracingLayer', {
    code: stagedLayerCode(repoRoot, hash, (outputDir) =>
      copyPackages(
        repoRoot,
        names.map((name) => ({ name, exclude: /\.(map|d\.ts|d\.cts|d\.mts)$/ })),
        outputDir,
      ),
    ),
    compatibleArchitectures: [Architecture.ARM_64, Architecture.X86_64],
    description: `Tracing (Powertools Tracer, X-Ray SDK) for the service's functions; lock ${hash.slice(0, 12)}`,
  });
}
