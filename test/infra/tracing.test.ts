import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/registry.js';
import { REPO_ROOT } from '../../infra/constructs/service-function.js';
import { dependencyClosure, TRACER_PACKAGE, tracingLayer } from '../../infra/constructs/tracing-layer.js';
import { findByLogicalIdPrefix, functionResource, synthesizeApp, templateOf, type SynthesizedApp } from './synth-app.js';

const SYNTH_TIMEOUT_MS = 120_000;

interface FunctionProperties {
  Layers?: unknown[];
  TracingConfig?: { Mode: string };
  Environment: { Variables: Record<string, unknown> };
}

let traced: SynthesizedApp;
let untraced: SynthesizedApp;

beforeAll(() => {
  traced = synthesizeApp({ tracing: 'true' });
  untraced = synthesizeApp();
}, SYNTH_TIMEOUT_MS);

const propertiesOf = (app: SynthesizedApp, definition: (typeof FUNCTIONS)[number]) =>
  functionResource(templateOf(app, definition), definition)[1].Properties as FunctionProperties;

describe('tracing (context tracing): Powertools Tracer from a layer, only when on', () => {
  it('with -c tracing=true, every function traces actively, gets the tracing layer of its stack and POWERTOOLS_TRACE_ENABLED', () => {
    for (const definition of FUNCTIONS) {
      const properties = propertiesOf(traced, definition);
      const [layerId] = findByLogicalIdPrefix(templateOf(traced, definition), 'AWS::Lambda::LayerVersion', 'TracingLayer');

      expect(properties.TracingConfig, definition.name).toEqual({ Mode: 'Active' });
      expect(properties.Layers, definition.name).toContainEqual({ Ref: layerId });
      expect(properties.Environment.Variables, definition.name).toMatchObject({
        POWERTOOLS_TRACE_ENABLED: 'true',
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
      });
    }
  });

  it('without it, no function traces, carries the layer or loads the Tracer', () => {
    for (const template of Object.values(untraced.templates))
      expect(Object.keys(template.findResources('AWS::Lambda::LayerVersion')).some((id) => id.startsWith('TracingLayer'))).toBe(false);
    for (const definition of FUNCTIONS) {
      const properties = propertiesOf(untraced, definition);
      expect(properties.TracingConfig?.Mode ?? 'PassThrough', definition.name).not.toBe('Active');
      expect(properties.Environment.Variables, definition.name).not.toHaveProperty('POWERTOOLS_TRACE_ENABLED');
    }
  });

  it(
    'stages a layer from which the Tracer loads on its own (no package of the repository in reach)',
    () => {
      const outdir = mkdtempSync(join(tmpdir(), 'tracing-layer-'));
      try {
        const app = new App({ outdir });
        tracingLayer(new Stack(app, 'TracingOnly'), REPO_ROOT);
        app.synth();
        const [asset] = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
        const modules = join(outdir, asset!, 'nodejs', 'node_modules');
        const script = `const { Tracer } = require('${TRACER_PACKAGE}'); const tracer = new Tracer({ serviceName: 'probe' }); process.stdout.write(typeof tracer.captureAWSv3Client + ' ' + require.resolve('aws-xray-sdk-core'));`;
        // From an empty folder, with only the layer on NODE_PATH, as Lambda resolves /opt/nodejs/node_modules.
        const output = execFileSync(process.execPath, ['-e', script], {
          cwd: outdir,
          env: { PATH: process.env.PATH, NODE_PATH: modules, AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR' },
          encoding: 'utf8',
        });

        expect(output).toBe(`function ${join(modules, 'aws-xray-sdk-core', 'dist', 'lib', 'index.js')}`);
        for (const name of dependencyClosure(REPO_ROOT, TRACER_PACKAGE))
          expect(existsSync(join(modules, name, 'package.json')), name).toBe(true);
        expect(existsSync(join(modules, '@types'))).toBe(false);
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    },
    SYNTH_TIMEOUT_MS,
  );
});
