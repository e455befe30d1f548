import { readdirSync, readFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/registry.js';
import { REPO_ROOT, ServiceFunction } from '../../infra/constructs/service-function.js';

const SYNTH_TIMEOUT_MS = 120_000;
/** Issue 16: every bundle under 1 MiB. */
const MAX_BUNDLE_BYTES = 1024 * 1024;

describe("files a function ships beside its bundle (FunctionBase.files): the OpenAPI document and the API reference's script", () => {
  it(
    'bundles the openapi function with esbuild, copies its files next to index.mjs, and keeps the bundle under 1 MiB',
    () => {
      const definition = FUNCTIONS.find((candidate) => candidate.name === 'openapi')!;
      const outdir = mkdtempSync(join(tmpdir(), 'shipped-files-synth-'));
      try {
        const app = new App({ outdir });
        new ServiceFunction(new Stack(app, 'OpenApiOnly'), 'OpenapiFunction', { definition });
        app.synth();
        // The function's code is the stack's only asset, staged as asset.<hash> in the cloud assembly.
        const assets = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
        expect(assets).toHaveLength(1);
        const staged = join(outdir, assets[0]!);

        expect(definition.files?.map((file) => file.name)).toEqual(['openapi.json', 'api-reference.js']);
        for (const file of definition.files!) {
          expect(readFileSync(join(staged, file.name)).equals(readFileSync(join(REPO_ROOT, file.source))), file.name).toBe(true);
        }
        expect(statSync(join(staged, 'index.mjs')).size).toBeLessThan(MAX_BUNDLE_BYTES);
        // Read at run time, never imported: neither file is inside the bundle.
        const bundle = readFileSync(join(staged, 'index.mjs'), 'utf8');
        expect(bundle).not.toContain('x-end-user-role');
        expect(bundle).not.toContain('createApiReference');
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    },
    SYNTH_TIMEOUT_MS,
  );
});
