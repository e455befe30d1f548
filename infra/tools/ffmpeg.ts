import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_FFMPEG } from '../../shared/convert/packages.js';

/**
 * The ffmpeg build of infra/tools/build-ffmpeg.sh, made where it is first needed rather than at
 * `npm ci`: the local stack and the tests start it in the background, synth runs it before it stages
 * the converters layer, `.ci/run` beside its installs. The script itself allows one build at a time
 * per clone (a lock in .converters/), so any number of callers may start it.
 */

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const FFMPEG_BUILD_SCRIPT = 'infra/tools/build-ffmpeg.sh';
/** Where a background build keeps the compiler's output, relative to the repository root. */
export const FFMPEG_BUILD_LOG = '.converters/ffmpeg-build.log';
/** What a failed build leaves: one line saying why (build-ffmpeg.sh writes it, the next build removes it). */
export const FFMPEG_BUILD_FAILED = '.converters/ffmpeg.failed';
/** The command that builds ffmpeg by hand, as messages name it. */
export const FFMPEG_BUILD_COMMAND = 'npm run converters:ffmpeg';

/** The id of the build the script makes, as it writes it to .converters/ffmpeg/BUILD: the script's SHA-256. */
export function ffmpegBuildId(repoRoot = REPO_ROOT): string {
  return createHash('sha256')
    .update(readFileSync(join(repoRoot, FFMPEG_BUILD_SCRIPT)))
    .digest('hex');
}

/** `current`: built by this script; `stale`: built by an older version of it (still usable); `missing`. */
export function ffmpegState(repoRoot = REPO_ROOT): 'current' | 'stale' | 'missing' {
  if (!existsSync(join(repoRoot, LOCAL_FFMPEG))) return 'missing';
  const build = join(repoRoot, '.converters', 'ffmpeg', 'BUILD');
  return existsSync(build) && readFileSync(build, 'utf8').trim() === ffmpegBuildId(repoRoot) ? 'current' : 'stale';
}

/** Why the last build failed, as build-ffmpeg.sh recorded it; undefined when it did not. */
export function ffmpegBuildFailure(repoRoot = REPO_ROOT): string | undefined {
  const file = join(repoRoot, FFMPEG_BUILD_FAILED);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || 'the build failed' : undefined;
}

/** Forgets the last failure, before a build whose outcome someone will poll for (the next build would remove it only once it runs). */
export function forgetFfmpegBuildFailure(repoRoot = REPO_ROOT): void {
  rmSync(join(repoRoot, FFMPEG_BUILD_FAILED), { force: true });
}

export interface FfmpegBuildOptions {
  repoRoot?: string;
  /** The build to run; by default `build-ffmpeg.sh --if-missing --log .converters/ffmpeg-build.log`. */
  command?: readonly string[];
  /** Each progress line of the build (`ffmpeg: building x264 (2/3)`); without it, stderr is not read. */
  onProgress?: (line: string) => void;
  /**
   * Let the build outlive this process (the tests: a run that did not need it leaves it to finish
   * for the next). Otherwise `stop()` ends it, and so does this process's end.
   */
  outlive?: boolean;
}

export interface FfmpegBuild {
  /** Settles when the build process ends: `built` (exit 0), `failed` with its reason, or `stopped`. */
  done: Promise<{ outcome: 'built' } | { outcome: 'failed'; reason: string } | { outcome: 'stopped' }>;
  /** Ends the build (its whole process group), leaving any previous binary in place. */
  stop(): void;
}

/**
 * Starts the build in the background, in a process group of its own (a Ctrl-C meant for the caller
 * reaches the build only through `stop()`). With a build already under way it waits for that one.
 */
export function startFfmpegBuild(options: FfmpegBuildOptions = {}): FfmpegBuild {
  const repoRoot = options.repoRoot ?? REPO_ROOT;
  const [command, ...args] = options.command ?? [FFMPEG_BUILD_SCRIPT, '--if-missing', '--log', FFMPEG_BUILD_LOG];
  const child = spawn(command!, args, {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', 'ignore', options.onProgress ? 'pipe' : 'ignore'],
  });
  let stopped = false;
  let lastLine = '';
  let pending = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('ffmpeg: ')) continue;
      lastLine = line.slice('ffmpeg: '.length);
      options.onProgress?.(line);
    }
  });
  const done = new Promise<Awaited<FfmpegBuild['done']>>((resolve) => {
    child.once('error', (error) => resolve({ outcome: 'failed', reason: `${command} could not be started: ${error.message}` }));
    child.once('close', (code) => {
      if (stopped) resolve({ outcome: 'stopped' });
      else if (code === 0) resolve({ outcome: 'built' });
      else
        resolve({
          outcome: 'failed',
          reason:
            (options.command ? undefined : ffmpegBuildFailure(repoRoot)) ??
            (lastLine || `the build ended with ${code === null ? 'a signal' : `exit code ${code}`}`),
        });
    });
  });
  const stop = () => {
    if (stopped || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    stopped = true;
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  };
  if (options.outlive) child.unref();
  else process.once('exit', stop);
  void done.then(() => process.off('exit', stop));
  return { done, stop };
}

/**
 * Builds ffmpeg now unless the current build is there, its progress on stderr: what synth does
 * before it stages the converters layer. Waits for a build already under way. Throws when it fails.
 */
export function buildFfmpegNow(repoRoot = REPO_ROOT): void {
  if (ffmpegState(repoRoot) === 'current') return;
  process.stderr.write(
    `ffmpeg is not built yet: building it now (${FFMPEG_BUILD_SCRIPT}, a few minutes, once per clone; log: ${FFMPEG_BUILD_LOG})\n`,
  );
  const result = spawnSync(join(repoRoot, FFMPEG_BUILD_SCRIPT), ['--if-missing', '--log', FFMPEG_BUILD_LOG], {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0 || ffmpegState(repoRoot) !== 'current') {
    throw new Error(
      `ffmpeg could not be built (${ffmpegBuildFailure(repoRoot) ?? result.error?.message ?? `exit code ${result.status}`}): run ${FFMPEG_BUILD_COMMAND} and see ${FFMPEG_BUILD_LOG}`,
    );
  }
}
