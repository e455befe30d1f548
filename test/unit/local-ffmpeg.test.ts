import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalFfmpeg } from '../../infra/local/ffmpeg.js';
import { ConversionError } from '../../shared/convert/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'local-ffmpeg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in for build-ffmpeg.sh: a shell script run with `sh -c`. */
const build = (script: string) => ['sh', '-c', script];

describe("the local stack's ffmpeg while it is built (infra/local/ffmpeg.ts)", () => {
  it('fails a video waiting for a build that failed with a final reason naming the command to run and the log', async () => {
    const lines: string[] = [];
    const ffmpeg = startLocalFfmpeg(
      {
        binary: join(dir, 'failed', 'ffmpeg'),
        command: build('echo "ffmpeg: could not download the sources" >&2; exit 1'),
        log: '.converters/ffmpeg-build.log',
      },
      (line) => lines.push(line),
    );

    const waited = ffmpeg.binary();

    await expect(waited).rejects.toThrow(ConversionError);
    await expect(waited).rejects.toThrow(
      'Videos are not converted here: ffmpeg could not be built (could not download the sources). Run npm run converters:ffmpeg (log: .converters/ffmpeg-build.log) and upload the video again.',
    );
    expect(lines).toEqual([
      'ffmpeg: a video waits for the build of ffmpeg to finish (log: .converters/ffmpeg-build.log)',
      'ffmpeg: could not download the sources',
    ]);
    expect(ffmpeg.building).toEqual({ log: '.converters/ffmpeg-build.log', replacing: false });
  });

  it('lets a waiting video go without a final reason when the stack stops during the build (the job is retried)', async () => {
    const ffmpeg = startLocalFfmpeg({ binary: join(dir, 'stopped', 'ffmpeg'), command: build('sleep 60') }, () => undefined);
    const waited = ffmpeg.binary();
    const outcome = waited.then(
      () => 'resolved',
      (error: unknown) => error,
    );

    await ffmpeg.stop();

    const error = await outcome;
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ConversionError);
    expect((error as Error).message).toBe('the local stack stopped while a video waited for the build of ffmpeg');
  });

  it('starts no build when ffmpeg is there', async () => {
    const binary = join(dir, 'present', 'ffmpeg');
    mkdirSync(join(dir, 'present'));
    writeFileSync(binary, '#!/bin/sh\n');
    chmodSync(binary, 0o755);
    const ffmpeg = startLocalFfmpeg({ binary, command: build('exit 1') }, () => undefined);

    expect(ffmpeg.building).toBeUndefined();
    await expect(ffmpeg.binary()).resolves.toBe(binary);
  });
});
