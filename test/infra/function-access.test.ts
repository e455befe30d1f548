import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { BUNDLING } from '../../infra/constructs/bundling.js';
import { entryOf, FUNCTIONS } from '../../functions/registry.js';

const root = path.resolve(import.meta.dirname, '../..');

/** The repository files whose code is in a function's bundle (after tree shaking), as repository paths. */
async function bundledFiles(entry: string): Promise<Set<string>> {
  const result = await build({
    entryPoints: [path.join(root, entry)],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: BUNDLING.format,
    target: BUNDLING.target,
    mainFields: [...BUNDLING.mainFields],
    outdir: path.join(root, '.bundle-check'),
    logLevel: 'silent',
  });
  const files = new Set<string>();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [input, used] of Object.entries(output.inputs))
      if (used.bytesInOutput > 0) files.add(path.relative(root, path.resolve(root, input)));
  }
  return files;
}

/**
 * The registry's access (FunctionAccess) is what the CDK stacks grant and which variables they set;
 * the local stack gives every function everything, so only this compares it with the code each
 * function ships. A function whose bundle signs storage links (`presignedGetUrl`: file,
 * thumbnail and attachment URLs in markup, thread and event views) needs the bucket: without it a
 * deployed function has no BUCKET_NAME and no s3:GetObject, and every view of a file markup fails.
 * The mark of signing is the presigner's code in the bundle (`presignedGetUrl`, tree-shaken out where
 * nothing calls it).
 */
describe('what each function ships, against what the registry grants it', { timeout: 120_000 }, () => {
  it('grants the bucket to every function whose bundle signs storage links', async () => {
    const missing: string[] = [];
    let signing = 0;
    for (const definition of FUNCTIONS) {
      const files = await bundledFiles(entryOf(definition));
      if (![...files].some((file) => file.includes('@aws-sdk/s3-request-presigner/'))) continue;
      signing += 1;
      if (!definition.access.bucket) missing.push(definition.name);
    }
    // Markups, threads and messages sign links, so a check that found none would pass everything.
    expect(signing).toBeGreaterThanOrEqual(3);
    expect(missing).toEqual([]);
  });
});
