import { randomUUID } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { expect, it } from 'vitest';
import { getS3 } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { localStack } from '../support/api.js';

/**
 * The local stack's S3 replaces an object whole, as S3 does: a GET while a PutObject writes over the
 * object answers the old object or the new one, never an empty or partial body.
 */
it('answers every GET during 40 overwrites of one object with one whole version of it, and lists it once', async () => {
  localStack();
  const Bucket = getConfig().bucketName;
  const Key = `overwrite-test/${randomUUID()}.json`;
  // Versions of different lengths, each a JSON document a reader can check whole.
  const versions = Array.from({ length: 4 }, (_, i) => JSON.stringify({ version: i, padding: 'x'.repeat(200_000 * (i + 1)) }));
  const put = (body: string) => getS3().send(new PutObjectCommand({ Bucket, Key, Body: body, ContentType: 'application/json' }));
  await put(versions[0]!);
  let writing = true;
  const reads: string[] = [];
  const reader = (async () => {
    while (writing) {
      const object = await getS3().send(new GetObjectCommand({ Bucket, Key }));
      reads.push(await object.Body!.transformToString());
    }
  })();
  for (let i = 1; i <= 40; i += 1) await put(versions[i % versions.length]!);
  writing = false;
  await reader;

  expect(reads.length).toBeGreaterThan(0);
  const torn = reads.filter((body) => !versions.includes(body)).map((body) => body.length);
  expect(torn, `${torn.length} of ${reads.length} reads were not a whole version`).toEqual([]);
  const listed = await getS3().send(new ListObjectsV2Command({ Bucket, Prefix: Key }));
  expect(listed.Contents?.map((entry) => entry.Key)).toEqual([Key]);
}, 120_000);
