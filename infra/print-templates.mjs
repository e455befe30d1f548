// Prints every stack template of a synthesized cloud assembly, each after a `# <StackName>` line.
// Usage: node infra/print-templates.mjs [assembly-dir]   (default: cdk.out beside cdk.json)
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const assemblyDir = resolve(process.argv[2] ?? join(repoRoot, 'cdk.out'));
const manifestPath = join(assemblyDir, 'manifest.json');

if (!existsSync(manifestPath)) {
  console.error(`No cloud assembly at ${assemblyDir}: run \`npx cdk synth\` first.`);
  process.exit(1);
}

const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
const artifacts = manifest.artifacts ?? {};
const isStack = (id) => artifacts[id]?.type === 'aws:cloudformation:stack';

// Dependencies first (the data stack before the stacks that import from it), else manifest order.
const stacks = [];
const visited = new Set();
const visit = (id) => {
  if (visited.has(id)) return;
  visited.add(id);
  for (const dependency of artifacts[id].dependencies ?? []) if (isStack(dependency)) visit(dependency);
  stacks.push([id, artifacts[id]]);
};
Object.keys(artifacts).filter(isStack).forEach(visit);

if (stacks.length === 0) {
  console.error(`The cloud assembly at ${assemblyDir} holds no stacks.`);
  process.exit(1);
}

const out = [];
for (const [artifactId, artifact] of stacks) {
  const stackName = artifact.properties?.stackName ?? artifact.displayName ?? artifactId;
  const template = JSON.parse(readFileSync(join(assemblyDir, artifact.properties.templateFile), 'utf8'));
  out.push(`# ${stackName}`, JSON.stringify(template, null, 2));
}
process.stdout.write(`${out.join('\n')}\n`);
