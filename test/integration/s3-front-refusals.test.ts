import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { GetObjectTaggingCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3Front } from '../../infra/local/s3-front.js';
import { credentials, region, startFrontOnS3rver, type FrontOnS3rver } from '../support/s3-front.js';

/**
 * Issue 18, item 10: the front refuses what S3 refuses. Unsigned and mis-signed requests never
 * reach s3rver, a presigned PUT holds the client to the signed headers, the POST `tagging` field
 * lands on the object, and a form post is judged on the fields before its file, then streamed.
 */
const bucket = 'refusals-bucket';
const MB = 1024 * 1024;

let harness: FrontOnS3rver;
let front: S3Front;
let s3: S3Client;

beforeAll(async () => {
  harness = await startFrontOnS3rver({ prefix: 's3-front-refusals-', buckets: [{ name: bucket }], allowMismatchedSignatures: true });
  ({ front, s3 } = harness);
});

afterAll(async () => {
  await harness?.close();
});

const s3Code = (text: string) => /<Code>(.*?)<\/Code>/s.exec(text)?.[1];
const exists = (key: string) =>
  s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
    () => true,
    () => false,
  );
const TAGGING = '<Tagging><TagSet><Tag><Key>upload-state</Key><Value>unconfirmed</Value></Tag></TagSet></Tagging>';

function presignPost(key: string, maxSize: number, extra: { conditions?: unknown[]; fields?: Record<string, string> } = {}) {
  return createPresignedPost(s3, {
    Bucket: bucket,
    Key: key,
    Conditions: [
      ['content-length-range', 0, maxSize],
      ['eq', '$Content-Type', 'application/octet-stream'],
      ...((extra.conditions ?? []) as never[]),
    ],
    Fields: { 'Content-Type': 'application/octet-stream', ...extra.fields },
    Expires: 300,
  });
}

/**
 * Posts a form whose file is `fileBytes` long without ever holding it: one 1 MB chunk written again
 * and again, stopping as soon as the front answers. `sentWhenAnswered` is how much of the body the
 * client had written when the answer arrived.
 */
function streamForm(
  fields: Record<string, string>,
  fileBytes: number,
): Promise<{ status: number; text: string; sentWhenAnswered: number }> {
  const boundary = `----refusals${randomUUID()}`;
  const head = Buffer.from(
    Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(MB, 7);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const request = httpRequest(`${front.url}/${bucket}`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + fileBytes + tail.length },
    });
    request.on('response', (response) => {
      answered = true;
      const sentWhenAnswered = sent;
      let text = '';
      response.on('data', (data: Buffer) => (text += data.toString()));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, text, sentWhenAnswered });
      });
    });
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    const write = (data: Buffer) => {
      sent += data.length;
      return request.write(data);
    };
    const pump = () => {
      let ok = true;
      if (sent === 0) ok = write(head);
      while (ok && !answered && sent < head.length + fileBytes) ok = write(chunk.subarray(0, Math.min(MB, head.length + fileBytes - sent)));
      if (answered) return;
      if (sent >= head.length + fileBytes) request.end(tail);
      else request.once('drain', pump);
    };
    pump();
  });
}

describe('S3 front: every request but a CORS preflight must be signed, and is held to what it signed', () => {
  it('refuses an unsigned PUT and an unsigned GET with 403 AccessDenied, storing nothing', async () => {
    const key = `uploads/${randomUUID()}.bin`;

    const put = await fetch(`${front.url}/${bucket}/${key}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: 'sneaky',
    });
    const get = await fetch(`${front.url}/${bucket}/${key}`);

    expect(put.status).toBe(403);
    expect(s3Code(await put.text())).toBe('AccessDenied');
    expect(get.status).toBe(403);
    expect(await exists(key)).toBe(false);
  });

  it('refuses a request signed with another secret with 403 SignatureDoesNotMatch', async () => {
    const forger = new S3Client({
      endpoint: front.url,
      forcePathStyle: true,
      region,
      credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: 'guessed' },
    });
    const key = `uploads/${randomUUID()}.bin`;

    const refused = await forger
      .send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }))
      .catch((error: { name: string; $metadata: { httpStatusCode: number } }) => error);
    forger.destroy();

    expect(refused).toMatchObject({ name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } });
    expect(await exists(key)).toBe(false);
  });

  it('holds a presigned PUT to its signed Content-Type, length and metadata, and stores its x-amz-tagging', async () => {
    const key = `uploads/${randomUUID()}.bin`;
    const bytes = Buffer.from('exactly these bytes');
    const url = await getSignedUrl(
      s3,
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        ContentType: 'image/png',
        ContentLength: bytes.length,
        Metadata: { 'file-id': 'f1' },
        Tagging: 'upload-state=unconfirmed',
      }),
      {
        expiresIn: 300,
        signableHeaders: new Set(['content-type', 'content-length']),
        unhoistableHeaders: new Set(['x-amz-meta-file-id', 'x-amz-tagging']),
      },
    );
    const headers = { 'Content-Type': 'image/png', 'x-amz-meta-file-id': 'f1', 'x-amz-tagging': 'upload-state=unconfirmed' };

    const otherType = await fetch(url, { method: 'PUT', headers: { ...headers, 'Content-Type': 'text/html' }, body: bytes });
    const longer = await fetch(url, { method: 'PUT', headers, body: Buffer.concat([bytes, Buffer.from('!')]) });
    const otherFileId = await fetch(url, { method: 'PUT', headers: { ...headers, 'x-amz-meta-file-id': 'f2' }, body: bytes });
    const storedBeforeValidPut = await exists(key);
    const valid = await fetch(url, { method: 'PUT', headers, body: bytes });
    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }));

    expect([otherType.status, longer.status, otherFileId.status]).toEqual([403, 403, 403]);
    expect(s3Code(await otherType.text())).toBe('SignatureDoesNotMatch');
    expect(storedBeforeValidPut).toBe(false);
    expect(valid.status).toBe(200);
    expect(tags.TagSet).toEqual([{ Key: 'upload-state', Value: 'unconfirmed' }]);
  });

  it('refuses an expired presigned URL with 403', async () => {
    const key = `uploads/${randomUUID()}.bin`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }));
    const url = new URL(
      await getSignedUrl(s3, new HeadObjectCommand({ Bucket: bucket, Key: key }), {
        expiresIn: 60,
        signingDate: new Date(Date.now() - 3_600_000),
      }),
    );

    const response = await fetch(url);

    expect(response.status).toBe(403);
  });
});

describe('S3 front: presigned POST tagging and streaming', () => {
  it('stores the tagging field of a POST on the object', async () => {
    const key = `uploads/${randomUUID()}.bin`;
    const post = await presignPost(key, MB, { conditions: [['eq', '$tagging', TAGGING]], fields: { tagging: TAGGING } });

    const posted = await streamForm(post.fields, 10);
    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }));

    expect(posted.status, posted.text).toBe(204);
    expect(tags.TagSet).toEqual([{ Key: 'upload-state', Value: 'unconfirmed' }]);
  });

  it('refuses a tagging field that is not a tag set with 400 MalformedXML', async () => {
    const key = `uploads/${randomUUID()}.bin`;
    const post = await presignPost(key, MB, {
      conditions: [['starts-with', '$tagging', '']],
      fields: { tagging: '<Tagging><TagSet><Tag>' },
    });

    const posted = await streamForm(post.fields, 10);

    expect(posted.status).toBe(400);
    expect(s3Code(posted.text)).toBe('MalformedXML');
    expect(await exists(key)).toBe(false);
  });

  it('refuses a mis-signed form from the fields before its file, without reading the 1 GB file', async () => {
    const key = `uploads/${randomUUID()}.bin`;
    const post = await presignPost(key, 2048 * MB);

    const posted = await streamForm({ ...post.fields, 'X-Amz-Signature': '0'.repeat(64) }, 1024 * MB);

    expect(posted.status).toBe(403);
    expect(s3Code(posted.text)).toBe('SignatureDoesNotMatch');
    expect(posted.sentWhenAnswered).toBeLessThan(64 * MB);
    expect(await exists(key)).toBe(false);
  }, 60_000);

  it('refuses a file past the policy maximum as soon as it passes it, not after reading 1 GB', async () => {
    const key = `uploads/${randomUUID()}.bin`;
    const post = await presignPost(key, MB);

    const posted = await streamForm(post.fields, 1024 * MB);

    expect(posted.status).toBe(400);
    expect(s3Code(posted.text)).toBe('EntityTooLarge');
    expect(posted.sentWhenAnswered).toBeLessThan(64 * MB);
    expect(await exists(key)).toBe(false);
  }, 60_000);

  it('streams a valid 200 MB upload to storage in bounded memory', async () => {
    const key = `uploads/${randomUUID()}.bin`;
    const size = 200 * MB;
    const post = await presignPost(key, size);
    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);

    const posted = await streamForm(post.fields, size).finally(() => clearInterval(sampler));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));

    expect(posted.status, posted.text).toBe(204);
    expect(head.ContentLength).toBe(size);
    expect(peak - baseline).toBeLessThan(100 * MB);
  }, 120_000);

  it('refuses fields before the file that exceed 20 KB with 400, as S3 does', async () => {
    const post = await presignPost(`uploads/${randomUUID()}.bin`, MB);

    const posted = await streamForm({ ...post.fields, 'x-ignore-padding': 'p'.repeat(30 * 1024) }, 10);

    expect(posted.status).toBe(400);
    expect(s3Code(posted.text)).toBe('MaxPostPreDataLengthExceededError');
  });
});
