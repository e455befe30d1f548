import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll } from 'vitest';
import { functionIdOf } from '../../infra/constructs/service-function.js';
import { buildApp, type ReviewBoardApp } from '../../infra/app.js';
import type { FunctionDefinition } from '../../functions/registry.js';

/** A CloudFormation resource as `Template.findResources` returns it. */
// Template JSON is untyped; tests walk into it by known property paths.
export type CfnResource = { Type: string; Properties?: Record<string, any>; [key: string]: any };

export interface PolicyStatement {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: unknown;
  [key: string]: unknown;
}

export interface SynthesizedApp extends ReviewBoardApp {
  templates: { data: Template; workers: Template; api: Template; web: Template };
}

/** The cloud assembly folders this test file synthesized into, removed when the file ends. */
const assemblies: string[] = [];
// Imported at collection, so this hook belongs to the importing test file.
afterAll(() => {
  for (const outdir of assemblies.splice(0)) rmSync(outdir, { recursive: true, force: true });
});

/** A new folder for a cloud assembly, removed when the test file ends. */
function assemblyFolder(): string {
  const outdir = mkdtempSync(join(tmpdir(), 'review-board-synth-'));
  assemblies.push(outdir);
  return outdir;
}

/**
 * Builds the app exactly as `cdk synth` does (cdk.json's context: feature flags, stage), but with
 * asset bundling skipped through `aws:cdk:bundling-stacks: []`: the functions still get code
 * assets, esbuild just never runs, so a synth takes seconds and needs no network.
 *
 * Assets are fingerprinted but not copied (`aws:cdk:disable-asset-staging`), and the cloud assembly
 * goes to a folder that is removed when the test file ends. Left to CDK, every synth copied its
 * assets (the converters layer alone is 67 MB) into a new `cdk.out*` folder under the system's
 * temporary folder that nothing removed: about 90 MB a synth and 30 synths a run, until a CI machine
 * ran out of disk. `withStagedAssembly` is for the test that reads the staged files.
 */
export function synthesizeApp(context: Record<string, unknown> = {}): SynthesizedApp {
  const built = buildApp({
    outdir: assemblyFolder(),
    context: { ...synthContext(), 'aws:cdk:disable-asset-staging': true, ...context },
  });
  return {
    ...built,
    templates: {
      data: Template.fromStack(built.data),
      workers: Template.fromStack(built.workers),
      api: Template.fromStack(built.api),
      web: Template.fromStack(built.web),
    },
  };
}

/** Synthesizes the app with its assets staged and hands `use` the cloud assembly's folder. */
export function withStagedAssembly<T>(use: (directory: string, built: ReviewBoardApp) => T): T {
  const built = buildApp({ outdir: assemblyFolder(), context: synthContext() });
  return use(built.app.synth().directory, built);
}

/** cdk.json's context, with bundling skipped. */
function synthContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] };
}

/** The template that holds a function: API functions live in the API stack, the rest in the workers stack. */
export function templateOf(synthesized: SynthesizedApp, definition: FunctionDefinition): Template {
  return definition.kind === 'api' ? synthesized.templates.api : synthesized.templates.workers;
}

/** The one resource of a type whose logical id is `prefix` plus CDK's 8-character hash. */
export function findByLogicalIdPrefix(template: Template, type: string, prefix: string): [string, CfnResource] {
  const pattern = new RegExp(`^${prefix}[0-9A-F]{8}$`);
  const matches = Object.entries(template.findResources(type) as Record<string, CfnResource>).filter(([id]) => pattern.test(id));
  if (matches.length !== 1) throw new Error(`Expected one ${type} named ${prefix}…, found ${matches.length}.`);
  return matches[0]!;
}

/** The Lambda function of a registry entry: `[logicalId, resource]`. */
export function functionResource(template: Template, definition: FunctionDefinition): [string, CfnResource] {
  return findByLogicalIdPrefix(template, 'AWS::Lambda::Function', functionIdOf(definition));
}

/** The environment variables of a registry entry's Lambda function. */
export function variablesOf(synthesized: SynthesizedApp, definition: FunctionDefinition): Record<string, unknown> {
  return (
    functionResource(templateOf(synthesized, definition), definition)[1].Properties as {
      Environment: { Variables: Record<string, unknown> };
    }
  ).Environment.Variables;
}

/**
 * Every statement of every IAM policy attached to the role of the function whose logical id starts
 * with `functionLogicalIdPrefix` (e.g. `WorkspacesFunction`), found through the function's `Role`.
 */
export function rolePolicyStatements(template: Template, functionLogicalIdPrefix: string): PolicyStatement[] {
  const [, fn] = findByLogicalIdPrefix(template, 'AWS::Lambda::Function', functionLogicalIdPrefix);
  const roleId = (fn.Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  const policies = Object.values(template.findResources('AWS::IAM::Policy') as Record<string, CfnResource>).filter((policy) =>
    (policy.Properties?.Roles as unknown[]).some((role) => JSON.stringify(role) === JSON.stringify({ Ref: roleId })),
  );
  return policies.flatMap((policy) => policy.Properties?.PolicyDocument.Statement as PolicyStatement[]);
}

export const actionsOf = (statement: PolicyStatement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

export const resourcesOf = (statement: PolicyStatement): unknown[] =>
  Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];

/** Every action the role allows whose service prefix is `service` (`dynamodb`, `s3`, `sqs`). */
export function allowedActions(statements: PolicyStatement[], service: string): string[] {
  return statements
    .filter((statement) => statement.Effect === 'Allow')
    .flatMap(actionsOf)
    .filter((action) => action.startsWith(`${service}:`));
}
