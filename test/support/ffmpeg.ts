import { FFMPEG_BUILD_COMMAND, FFMPEG_BUILD_LOG, ffmpegBuildFailure, ffmpegState } from '../../infra/tools/ffmpeg.js';
import { eventually } from './polling.js';

/**
 * How long a test waits for the build of ffmpeg that test/support/ffmpeg-setup.ts started: about 5
 * minutes on an idle 2-core machine, longer beside the rest of the run.
 */
export const FFMPEG_WAIT_MS = 20 * 60_000;

/** The timeout of a test (or hook) that waits for ffmpeg first: the wait, and a minute for the test itself. */
export const FFMPEG_TEST_TIMEOUT_MS = FFMPEG_WAIT_MS + 60_000;

/**
 * Waits until the current build of ffmpeg is there (a fresh clone builds it while the run goes,
 * test/support/ffmpeg-setup.ts), polling; fails with the build's own reason when it failed. For the
 * `beforeAll` (timeout FFMPEG_WAIT_MS and a margin) of tests that run ffmpeg.
 */
export async function ffmpegBuilt(timeoutMs = FFMPEG_WAIT_MS): Promise<void> {
  const seen = await eventually(
    async () => ({ state: ffmpegState(), failure: ffmpegBuildFailure() }),
    ({ state, failure }) => state === 'current' || failure !== undefined,
    timeoutMs,
  );
  if (seen.state === 'current') return;
  if (seen.failure)
    throw new Error(`ffmpeg could not be built (${seen.failure}): see ${FFMPEG_BUILD_LOG}, fix the cause and run ${FFMPEG_BUILD_COMMAND}`);
  throw new Error(
    `ffmpeg was not built within ${timeoutMs / 60_000} minutes (its log: ${FFMPEG_BUILD_LOG}); ${FFMPEG_BUILD_COMMAND} builds it ahead of the tests`,
  );
}
