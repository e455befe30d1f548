import { FFMPEG_BUILD_LOG, ffmpegState, forgetFfmpegBuildFailure, startFfmpegBuild } from '../../infra/tools/ffmpeg.js';

const STARTED = Symbol.for('review-board.ffmpeg-build-started');

/**
 * Starts the build of ffmpeg in the background when the clone has no current one (`npm ci` builds
 * nothing), at the start of the run, so the tests that need it (`ffmpegBuilt()`) wait as little as
 * possible. Listed by each project that has such tests; the build starts once per run. It may
 * outlive the run: a run that did not need it leaves it to finish for the next one.
 */
export function setup(): void {
  const state = globalThis as { [STARTED]?: boolean };
  if (state[STARTED]) return;
  state[STARTED] = true;
  if (ffmpegState() === 'current') return;
  // The tests poll for the outcome: not the failure of an earlier build.
  forgetFfmpegBuildFailure();
  startFfmpegBuild({ outlive: true });
  process.stderr.write(
    `ffmpeg is not built yet: building it in the background for the video tests (a few minutes; log: ${FFMPEG_BUILD_LOG})\n`,
  );
}
