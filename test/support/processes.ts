import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QUEUE_URL_ENV } from '../../shared/config.js';

export const repoRoot = join(import.meta.dirname, '..', '..');

export interface AdminResult {
  status: number | null;
  json: any;
  stderr: string;
}

/** `npm run --silent admin -- ...` as an operator runs it; returns its parsed stdout and exit code. */
export function runAdmin(dataDir: string, args: string[]): AdminResult {
  const result = spawnSync('npm', ['run', '--silent', 'admin', '--', ...args], { cwd: repoRoot, env: adminEnv(dataDir), encoding: 'utf8' });
  return adminResult(result.status, result.stdout, result.stderr);
}

/**
 * `runAdmin` without blocking this process, for a file whose own local stack runs in it: the CLI
 * talks to that stack's emulators, which a blocked event loop would never answer.
 */
export async function runAdminAsync(dataDir: string, args: string[]): Promise<AdminResult> {
  const child = spawn('npm', ['run', '--silent', 'admin', '--', ...args], {
    cwd: repoRoot,
    env: adminEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return adminResult(status, stdout, stderr);
}

/**
 * The operator's environment: the stack found through DATA_DIR, never the deployed-stack variables
 * this test process carries for its own clients (TABLE_NAME, the queue URLs).
 */
function adminEnv(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, TABLE_NAME: '' };
  for (const variable of Object.values(QUEUE_URL_ENV)) delete env[variable];
  return env;
}

function adminResult(status: number | null, stdout: string, stderr: string): AdminResult {
  const lines = stdout.trim().split('\n').filter(Boolean);
  return { status, json: lines.length === 1 ? JSON.parse(lines[0]!) : lines, stderr };
}

export interface StartedStack {
  child: ChildProcess;
  stack: { baseUrl: string; organizationId: string; workspaceId: string; organizationApiKey: string; workspaceApiKey: string };
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `npm start` in a child process; resolves once `DATA_DIR/stack.json` is written for this start. */
export async function startStack(dataDir: string, env: Record<string, string> = {}): Promise<StartedStack> {
  const file = join(dataDir, 'stack.json');
  const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  const child = spawn('npm', ['start'], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (existsSync(file) && readFileSync(file, 'utf8') !== before && output.includes('Ctrl-C')) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    stack: JSON.parse(readFileSync(file, 'utf8')),
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal);
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * `kill -9` of a started stack's whole process group (npm, node, the DynamoDB Local JVM), as an
 * operator's kill or a crash would end it: nothing runs its shutdown. Resolves once the JVM that held
 * `dataDir` is gone, so a restart on the same DATA_DIR finds its files free.
 */
export async function killStack(started: StartedStack, dataDir: string): Promise<void> {
  const exited = started.child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => started.child.once('exit', resolve));
  process.kill(-started.child.pid!, 'SIGKILL');
  await exited;
  const deadline = Date.now() + 20_000;
  while (javaProcessesFor(dataDir).length > 0) {
    if (Date.now() > deadline) throw new Error(`DynamoDB Local of ${dataDir} outlived the kill`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Process ids of running DynamoDB Local JVMs whose command line mentions `marker` (read from /proc). */
export function javaProcessesFor(marker: string): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
        return command.includes('DynamoDBLocal.jar') && command.includes(marker);
      } catch {
        return false;
      }
    });
}
