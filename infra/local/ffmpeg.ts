import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConversionError } from '../../shared/convert/errors.js';
import { LOCAL_FFMPEG, type LocalFfmpeg } from '../../shared/convert/packages.js';
import { FFMPEG_BUILD_COMMAND, FFMPEG_BUILD_LOG, ffmpegState, REPO_ROOT, startFfmpegBuild, type FfmpegBuild } from '../tools/ffmpeg.js';

export interface LocalFfmpegOptions {
  /** The binary the build makes; by default the repository's (.converters/ffmpeg/bin/ffmpeg). */
  binary?: string;
  /** The build; by default infra/tools/build-ffmpeg.sh (see infra/tools/ffmpeg.ts). */
  command?: readonly string[];
  /** The build's log, as messages name it. */
  log?: string;
}

export interface LocalFfmpegBuild extends LocalFfmpeg {
  /**
   * The build this start began, undefined when the current build was there: its log, and whether it
   * replaces an older build (which serves meanwhile) or videos wait for it.
   */
  building: { log: string; replacing: boolean } | undefined;
  stop(): Promise<void>;
}

/**
 * ffmpeg for the local stack's conversion worker. When it is missing (a fresh clone: `npm ci` does
 * not build it) or was built by an older build script, the build starts in the background and its
 * progress lines go to `log`; a video converted meanwhile waits for it (`binary()`), and when the
 * build fails its final reason names the command to run and the log. A stale binary serves until the
 * new one replaces it.
 */
export function startLocalFfmpeg(options: LocalFfmpegOptions, log: (line: string) => void): LocalFfmpegBuild {
  const binary = options.binary ?? join(REPO_ROOT, LOCAL_FFMPEG);
  const logFile = options.log ?? FFMPEG_BUILD_LOG;
  const state = options.binary ? (existsSync(binary) ? 'current' : 'missing') : ffmpegState();
  if (state === 'current') return { building: undefined, binary: async () => binary, stop: async () => undefined };
  const build: FfmpegBuild = startFfmpegBuild({ command: options.command, onProgress: log });
  let waiting = false;
  return {
    building: { log: logFile, replacing: state === 'stale' },
    binary: async () => {
      if (existsSync(binary)) return binary;
      if (!waiting) {
        waiting = true;
        log(`ffmpeg: a video waits for the build of ffmpeg to finish (log: ${logFile})`);
      }
      const result = await build.done;
      waiting = false;
      if (existsSync(binary)) return binary;
      if (result.outcome === 'stopped') throw new Error('the local stack stopped while a video waited for the build of ffmpeg');
      const reason = result.outcome === 'failed' ? result.reason : 'the build made no binary';
      throw new ConversionError(
        `Videos are not converted here: ffmpeg could not be built (${reason}). Run ${FFMPEG_BUILD_COMMAND} (log: ${logFile}) and upload the video again.`,
      );
    },
    stop: async () => {
      build.stop();
      await build.done;
    },
  };
}
