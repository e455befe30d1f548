import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { entryOf, FUNCTIONS } from '../functions/registry.js';
import { BUNDLING } from '../infra/constructs/bundling.js';

/** Targets of issue 16 (150 ms in issue 2): every bundle under 1 MiB, importing it under 100 ms. */
const MAX_BYTES = 1024 * 1024;
const MAX_IMPORT_MS = 100;
const IMPORT_RUNS = 5;

/**
 * Bundles each function as the CDK construct does, then imports each bundle in fresh Node processes
 * (the work a cold start does before the first event) and reports the median import time.
 */
export async function benchBundles(): Promise<void> {
  const outDir = mkdtempSync(join(tmpdir(), 'review-board-bundles-'));
  process.stdout.write(
    `Bundles (esbuild ${BUNDLING.format}, target ${BUNDLING.target}, minified; import = median of ${IMPORT_RUNS} fresh processes)\n\n`,
  );
  try {
    for (const definition of FUNCTIONS) {
      const outfile = join(outDir, definition.name, 'index.mjs');
      await build({
        entryPoints: [entryOf(definition)],
        bundle: true,
        platform: 'node',
        format: BUNDLING.format,
        target: BUNDLING.target,
        minify: BUNDLING.minify,
        sourcemap: BUNDLING.sourceMap ? 'external' : false,
        mainFields: [...BUNDLING.mainFields],
        banner: { js: BUNDLING.banner },
        outfile,
        logLevel: 'error',
      });
      const bytes = statSync(outfile).size;
      const times = Array.from({ length: IMPORT_RUNS }, () => importMs(outfile)).sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)]!;
      const verdict = bytes < MAX_BYTES && median < MAX_IMPORT_MS ? 'ok' : 'OVER TARGET';
      process.stdout.write(
        `${definition.name.padEnd(20)} ${(bytes / 1024).toFixed(0).padStart(6)} KiB   import ${median.toFixed(1).padStart(6)} ms   ${verdict}\n`,
      );
    }
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

function importMs(file: string): number {
  const script = `const t=performance.now();await import(${JSON.stringify(`file://${file}`)});process.stdout.write(String(performance.now()-t));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: {
      PATH: process.env.PATH,
      TABLE_NAME: 'bench',
      BUCKET_NAME: 'bench',
      AWS_REGION: 'us-east-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`importing ${file} failed: ${result.stderr}`);
  return Number(result.stdout);
}
