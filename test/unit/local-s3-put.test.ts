import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { putFromFile } from '../../infra/local/s3-form-upload.js';

const dir = mkdtempSync(join(tmpdir(), 'local-s3-put-'));
const file = join(dir, 'upload');
writeFileSync(file, 'x'.repeat(17_000));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const answered = (status: number, name: string) =>
  new S3ServiceException({ name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status }, message: name });

/**
 * A client whose PutObjects answer `answers` in turn (an error, or success), recording the body
 * each attempt sent: the front's store step as s3rver would answer it, without s3rver.
 */
function clientAnswering(answers: (S3ServiceException | Error | 'ok')[]) {
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  });
  const bodies: number[] = [];
  client.middlewareStack.add(
    () => async (args) => {
      let length = 0;
      for await (const chunk of (args.input as { Body: AsyncIterable<Buffer> }).Body) length += chunk.length;
      bodies.push(length);
      const answer = answers[bodies.length - 1];
      if (answer !== 'ok') throw answer;
      return { output: { ETag: '"etag"', $metadata: { httpStatusCode: 200 } }, response: {} };
    },
    { step: 'initialize', name: 'answers' },
  );
  return { client, bodies };
}

describe('the local S3 front stores an accepted upload again after a failure that says "try again"', () => {
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);

  it('sends the whole file again after an InternalError (500) and a dropped socket, and answers the stored object', async () => {
    const { client, bodies } = clientAnswering([answered(500, 'InternalError'), new Error('socket hang up'), 'ok']);

    const stored = await putFromFile(client, file, { Bucket: 'b', Key: 'uploads/k' });

    expect(stored.ETag).toBe('"etag"');
    expect(bodies).toEqual([17_000, 17_000, 17_000]);
  });

  it('gives up after three attempts, and at once on a refusal (4xx)', async () => {
    const failing = clientAnswering([answered(503, 'SlowDown'), answered(500, 'InternalError'), answered(500, 'InternalError'), 'ok']);
    const refused = clientAnswering([answered(403, 'AccessDenied'), 'ok']);

    await expect(putFromFile(failing.client, file, { Bucket: 'b', Key: 'uploads/k' })).rejects.toThrow('InternalError');
    await expect(putFromFile(refused.client, file, { Bucket: 'b', Key: 'uploads/k' })).rejects.toThrow('AccessDenied');
    expect(failing.bodies).toHaveLength(3);
    expect(refused.bodies).toHaveLength(1);
  });
});
