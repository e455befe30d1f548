import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../infra/local/stack.js';
import { ffmpegPath } from '../../shared/convert/packages.js';
import { ffmpegBuilt, FFMPEG_TEST_TIMEOUT_MS } from '../support/ffmpeg.js';
import { eventually } from '../support/polling.js';
import { makeVideo } from '../support/sample-files.js';

/**
 * `npm ci` builds no ffmpeg: the local stack builds it in the background when it is missing, and a
 * video uploaded meanwhile waits for the build instead of failing for good (issue 29, item 1). A
 * stack of this file's own, whose "build" is a stand-in that installs the real binary (copied from
 * the repository's build) at a path of the file's own once the test lets it.
 */
let local: LocalStack;
let dir: string;
const lines: string[] = [];

beforeAll(async () => {
  await ffmpegBuilt();
  dir = mkdtempSync(join(tmpdir(), 'review-board-ffmpeg-'));
  const build = [
    'echo "ffmpeg: building (stand-in)" >&2',
    'while [ ! -e "$1" ]; do sleep 0.05; done',
    'mkdir -p "$(dirname "$2")" && cp "$3" "$2.tmp" && mv "$2.tmp" "$2"',
    'echo "ffmpeg: built" >&2',
  ].join('\n');
  local = await startLocalStack({
    port: 0,
    dataDir: join(dir, 'data'),
    memory: true,
    log: (line) => lines.push(line),
    ffmpeg: {
      binary: join(dir, 'bin', 'ffmpeg'),
      command: ['sh', '-c', build, 'build', join(dir, 'go'), join(dir, 'bin', 'ffmpeg'), ffmpegPath()],
      log: 'build.log',
    },
  });
}, FFMPEG_TEST_TIMEOUT_MS);

afterAll(async () => {
  await local?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: FormData): Promise<{ status: number; body: any }> {
  const response = await fetch(new URL(`/api/v2${path}`, local.stack.baseUrl), {
    method,
    headers: { Authorization: `Bearer ${local.stack.workspaceApiKey}`, 'Service-API-Version': '2023-02-22' },
    body,
  });
  return { status: response.status, body: await response.json() };
}

describe('the local stack builds ffmpeg on first need (npm ci builds nothing)', () => {
  it('says it builds ffmpeg, and converts a video uploaded meanwhile once the build is done', async () => {
    expect(local.ffmpegBuild).toEqual({ log: 'build.log', replacing: false });
    const form = new FormData();
    form.append(
      'file',
      new Blob([await makeVideo({ seconds: 1, width: 160, height: 90, format: 'webm', audio: false })], { type: 'video/webm' }),
      'clip.webm',
    );
    const created = await api('POST', `/markups/file?workspaceId=${local.stack.workspaceId}`, form);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.id as string;

    // The worker took the job and waits for the build, saying so; the markup stays pending meanwhile.
    const waiting = await eventually(
      async () => lines.join('\n'),
      (text) => text.includes('a video waits for the build of ffmpeg to finish (log: build.log)'),
    );
    expect(waiting).toContain('ffmpeg: building (stand-in)');
    expect((await api('GET', `/markups/${id}`)).body.data).toMatchObject({ isReady: false });

    writeFileSync(join(dir, 'go'), '');
    const ready = await eventually(
      async () => (await api('GET', `/markups/${id}`)).body.data,
      (markup) => markup.isReady === true,
      60_000,
    );
    expect(ready).toMatchObject({ isReady: true, type: 'video', video: { width: 160, height: 90 } });
    expect(ready.conversionError).toBeUndefined();
    expect(lines).toContain('ffmpeg: built');
  }, 90_000);
});
