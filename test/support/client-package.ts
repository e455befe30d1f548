import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** The client's package folder (`npm pack` there builds and packs it). */
export const CLIENT_DIR = join(REPO, 'clients/typescript');
/** The page whose ```ts blocks are compiled against the packed client, in order, as one program. */
export const CLIENT_DOCS = join(REPO, 'docs/typescript-client.md');
/** The repository's TypeScript compiler, run on the scratch project (which installs no compiler). */
export const TSC = join(REPO, 'node_modules/typescript/bin/tsc');

type Manifest = { name: string; version: string; dependencies?: Record<string, string> };
const manifestOf = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** The code blocks of one language in a Markdown page, in order. */
export function codeBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(/^```(\S*)\n([\s\S]*?)^```$/gm)].filter(([, fence]) => fence === language).map(([, , code]) => code!);
}

/**
 * The packages a scratch project needs besides the client, found in the repository's own
 * node_modules: the client's dependencies (at the exact versions it pins, or this fails naming the
 * difference), theirs in turn, and `extra` (such as @types/node). Packed from there, they install
 * with `--offline`: the test needs no registry.
 */
function localPackages(extra: string[]): string[] {
  const wanted = [...Object.entries(manifestOf(CLIENT_DIR).dependencies ?? {}), ...extra.map((name) => [name, undefined] as const)];
  const found = new Map<string, string>();
  while (wanted.length > 0) {
    const [name, range] = wanted.pop()!;
    if (found.has(name)) continue;
    const dir = join(REPO, 'node_modules', name);
    const manifest = manifestOf(dir);
    // The client pins exact versions; ranges of its dependencies' own dependencies are left to npm.
    if (range !== undefined && /^\d/.test(range) && manifest.version !== range) {
      throw new Error(
        `the client pins ${name} ${range}, the repository has ${manifest.version}: pin the same version in both package.json files`,
      );
    }
    found.set(name, dir);
    wanted.push(...Object.entries(manifest.dependencies ?? {}));
  }
  return [...found.values()];
}

/**
 * Packs the client as a user would (`npm pack`, whose `prepack` builds `dist/`) and installs the
 * tarball into a new scratch project in a temporary directory, with its dependencies packed from
 * the repository's node_modules (`npm install --offline`). Returns the project's directory and the
 * tarball's path.
 */
export async function installPackedClient(options: { extra?: string[] } = {}): Promise<{ project: string; tarball: string }> {
  const root = mkdtempSync(join(tmpdir(), 'review-board-client-'));
  const packs = join(root, 'packs');
  const project = join(root, 'project');
  mkdirSync(packs);
  mkdirSync(project);
  await run('npm', ['pack', '--silent', '--pack-destination', packs], { cwd: CLIENT_DIR });
  const [tarball] = readdirSync(packs).filter((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${packs}`);
  await run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', packs, ...localPackages(options.extra ?? [])], {
    cwd: root,
  });

  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'scratch', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  const tarballs = readdirSync(packs)
    .filter((name) => name.endsWith('.tgz'))
    .map((name) => join(packs, name));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], { cwd: project });
  return { project, tarball: join(packs, tarball) };
}

/** Runs the repository's tsc with `args` in `cwd`; resolves with its exit code and output, never rejects on a type error. */
export async function typeCheck(cwd: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [TSC, ...args], { cwd });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}
