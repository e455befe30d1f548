import { createHash, randomUUID } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost, type PresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Event } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { S3Front } from '../../infra/local/s3-front.js';
import { credentials, region, startFrontOnS3rver, type FrontOnS3rver } from '../support/s3-front.js';

const bucket = 'test-bucket';
const corsBucket = 'cors-bucket';
const corsOrigin = 'http://localhost:5173';
const corsConfig =
  '<CORSConfiguration><CORSRule>' +
  `<AllowedOrigin>${corsOrigin}</AllowedOrigin><AllowedMethod>POST</AllowedMethod><AllowedMethod>GET</AllowedMethod>` +
  '<AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader>' +
  '</CORSRule></CORSConfiguration>';

let harness: FrontOnS3rver;
let front: S3Front;
let s3: S3Client;
const events: S3Event[] = [];
let failNextCallback = false;

beforeAll(async () => {
  harness = await startFrontOnS3rver({
    prefix: 's3-front-test-',
    buckets: [{ name: bucket }, { name: corsBucket, configs: [corsConfig] }],
    onObjectCreated: (event) => {
      events.push(event);
      if (failNextCallback) {
        failNextCallback = false;
        throw new Error('subscriber exploded');
      }
    },
  });
  ({ front, s3 } = harness);
});

afterAll(async () => {
  await harness?.close();
});

/** Binary on purpose: CR, LF, NUL and high bytes must all survive the form round trip. */
function pngBytes(length = 64): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (i * 37 + 13) % 256));
}

interface PolicyOptions {
  key?: string;
  size?: number;
  expires?: number;
  client?: S3Client;
  extraFields?: Record<string, string>;
}

/** A policy shaped like the one the upload API issues: exact size, exact type, uploads/ prefix, file id metadata. */
async function presign(options: PolicyOptions = {}): Promise<PresignedPost & { key: string; size: number; fileId: string }> {
  const key = options.key ?? `uploads/${randomUUID()}.png`;
  const size = options.size ?? 64;
  const fileId = `file-${randomUUID()}`;
  const post = await createPresignedPost(options.client ?? s3, {
    Bucket: bucket,
    Key: key,
    Conditions: [
      ['content-length-range', size, size],
      ['eq', '$Content-Type', 'image/png'],
      ['starts-with', '$key', 'uploads/'],
    ],
    Fields: { 'Content-Type': 'image/png', 'x-amz-meta-file-id': fileId, ...options.extraFields },
    Expires: options.expires ?? 300,
  });
  return { ...post, key, size, fileId };
}

interface SubmitOptions {
  url?: string;
  fields: Record<string, string>;
  file?: Buffer;
  filename?: string;
  after?: Record<string, string>;
}

/** Posts the way a browser does: policy fields in order, then `file`, then anything that follows it. */
async function submit(options: SubmitOptions): Promise<{ status: number; headers: Headers; text: string }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(options.fields)) form.append(name, value);
  if (options.file !== undefined) {
    form.append('file', new Blob([options.file], { type: 'image/png' }), options.filename ?? 'photo.png');
  }
  for (const [name, value] of Object.entries(options.after ?? {})) form.append(name, value);
  const response = await fetch(options.url ?? `${front.url}/${bucket}`, { method: 'POST', body: form });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function s3Error(text: string): { code: string | undefined; message: string | undefined } {
  return { code: /<Code>(.*?)<\/Code>/s.exec(text)?.[1], message: /<Message>(.*?)<\/Message>/s.exec(text)?.[1] };
}

async function waitForEvent(predicate: (event: S3Event) => boolean): Promise<S3Event> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = events.find(predicate);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('timed out waiting for an ObjectCreated event');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const decodeEventKey = (key: string) => decodeURIComponent(key.replace(/\+/g, ' '));

describe('S3 front: presigned POST uploads', () => {
  it('stores a valid upload and answers 204 with the quoted ETag; the object reads back identically through the front', async () => {
    const post = await presign();
    const file = pngBytes(post.size);

    const response = await submit({ url: post.url, fields: post.fields, file });

    expect(response.status).toBe(204);
    expect(response.headers.get('etag')).toBe(`"${md5(file)}"`);
    expect(response.headers.get('location')).toBe(`${front.url}/${bucket}/${post.key}`);
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: post.key }));
    expect(object.ContentType).toBe('image/png');
    expect(object.Metadata).toEqual({ 'file-id': post.fileId });
    expect(Buffer.from(await object.Body!.transformToByteArray()).equals(file)).toBe(true);
  });

  it('emits an AWS-shaped ObjectCreated:Post event with the key URL-encoded the way S3 does', async () => {
    const key = 'uploads/my file ü+1 (final).png';
    const post = await presign({ key });
    const file = pngBytes(post.size);

    expect((await submit({ fields: post.fields, file })).status).toBe(204);

    const event = await waitForEvent(
      (e) => e.Records[0]?.eventName === 'ObjectCreated:Post' && decodeEventKey(e.Records[0].s3.object.key) === key,
    );
    const record = event.Records[0]!;
    expect(record.s3.object.key).toBe('uploads/my+file+%C3%BC%2B1+%28final%29.png');
    expect(record).toMatchObject({
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      awsRegion: region,
      eventName: 'ObjectCreated:Post',
      userIdentity: { principalId: `AWS:${credentials.accessKeyId}` },
      requestParameters: { sourceIPAddress: '127.0.0.1' },
      s3: {
        s3SchemaVersion: '1.0',
        bucket: { name: bucket, arn: `arn:aws:s3:::${bucket}` },
        object: { size: file.length, eTag: md5(file) },
      },
    });
    expect(new Date(record.eventTime).toISOString()).toBe(record.eventTime);
    expect(record.responseElements['x-amz-request-id']).toMatch(/^[0-9A-F]+$/);
    expect(record.responseElements['x-amz-id-2']).not.toBe('');
    expect(record.s3.configurationId).not.toBe('');
    expect(record.s3.bucket.ownerIdentity.principalId).not.toBe('');
    expect(record.s3.object.sequencer).toMatch(/^[0-9A-F]+$/);
  });

  it('replaces ${filename} in the key with the uploaded file name', async () => {
    const post = await presign({ key: 'uploads/${filename}' });
    const file = pngBytes(post.size);
    const filename = `${randomUUID()}.png`;

    const response = await submit({ fields: post.fields, file, filename });

    expect(response.status).toBe(204);
    expect(response.headers.get('location')).toBe(`${front.url}/${bucket}/uploads/${filename}`);
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `uploads/${filename}` }));
    expect(Buffer.from(await object.Body!.transformToByteArray()).equals(file)).toBe(true);
  });

  it('honours success_action_status 201 with a PostResponse document', async () => {
    const post = await presign({ extraFields: { success_action_status: '201' } });
    const file = pngBytes(post.size);

    const response = await submit({ fields: post.fields, file });

    expect(response.status).toBe(201);
    expect(response.text).toContain(`<Key>${post.key}</Key>`);
    expect(response.text).toContain(`<ETag>"${md5(file)}"</ETag>`);
  });

  const tamperings: Array<{ field: string; tamper: (fields: Record<string, string>) => void; code: string }> = [
    { field: 'key', tamper: (f) => void (f.key = 'uploads/someone-else.png'), code: 'AccessDenied' },
    { field: 'Content-Type', tamper: (f) => void (f['Content-Type'] = 'text/html'), code: 'AccessDenied' },
    { field: 'x-amz-meta-file-id', tamper: (f) => void (f['x-amz-meta-file-id'] = 'file-forged'), code: 'AccessDenied' },
    {
      field: 'Policy',
      tamper: (f) => {
        const policy = JSON.parse(Buffer.from(f.Policy!, 'base64').toString('utf8')) as { conditions: unknown[] };
        policy.conditions = policy.conditions.map((c) =>
          JSON.stringify(c) === '["eq","$Content-Type","image/png"]' ? ['starts-with', '$Content-Type', ''] : c,
        );
        f.Policy = Buffer.from(JSON.stringify(policy)).toString('base64');
      },
      code: 'SignatureDoesNotMatch',
    },
    {
      field: 'X-Amz-Signature',
      tamper: (f) =>
        void (f['X-Amz-Signature'] = `${f['X-Amz-Signature']!.slice(0, -1)}${f['X-Amz-Signature']!.endsWith('0') ? '1' : '0'}`),
      code: 'SignatureDoesNotMatch',
    },
    {
      field: 'X-Amz-Credential',
      tamper: (f) => void (f['X-Amz-Credential'] = f['X-Amz-Credential']!.replace(`/${region}/`, '/eu-west-1/')),
      code: 'AccessDenied',
    },
    {
      field: 'X-Amz-Date',
      tamper: (f) =>
        void (f['X-Amz-Date'] = `${f['X-Amz-Date']!.slice(0, 9)}${f['X-Amz-Date']!.endsWith('235959Z') ? '000000Z' : '235959Z'}`),
      code: 'AccessDenied',
    },
    { field: 'X-Amz-Algorithm', tamper: (f) => void (f['X-Amz-Algorithm'] = 'AWS4-HMAC-SHA512'), code: 'AccessDenied' },
  ];

  it.each(tamperings)('refuses a tampered $field field with 403 naming it', async ({ field, tamper, code }) => {
    const post = await presign();
    const fields = { ...post.fields };
    tamper(fields);

    const response = await submit({ fields, file: pngBytes(post.size) });

    expect(response.status).toBe(403);
    expect(s3Error(response.text).code).toBe(code);
    expect(s3Error(response.text).message).toContain(field);
  });

  it('refuses a post to another bucket than the policy names with 403 naming $bucket', async () => {
    const post = await presign();

    const response = await submit({ url: `${front.url}/other-bucket`, fields: post.fields, file: pngBytes(post.size) });

    expect(response.status).toBe(403);
    expect(s3Error(response.text)).toEqual({
      code: 'AccessDenied',
      message: `Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "${bucket}"]`,
    });
  });

  it('refuses a post that drops a field the policy requires with 403 naming it', async () => {
    const post = await presign();
    const { 'x-amz-meta-file-id': _dropped, ...fields } = post.fields;

    const response = await submit({ fields, file: pngBytes(post.size) });

    expect(response.status).toBe(403);
    expect(s3Error(response.text).message).toBe(
      `Invalid according to Policy: Policy Condition failed: ["eq", "$x-amz-meta-file-id", "${post.fileId}"]`,
    );
  });

  it('refuses a post with a field no condition covers with 403 naming it', async () => {
    const post = await presign();

    const response = await submit({ fields: { ...post.fields, 'x-amz-meta-foo': 'bar' }, file: pngBytes(post.size) });

    expect(response.status).toBe(403);
    expect(s3Error(response.text)).toEqual({
      code: 'AccessDenied',
      message: 'Invalid according to Policy: Extra input fields: x-amz-meta-foo',
    });
  });

  it('accepts uncovered fields prefixed x-ignore-, as S3 does', async () => {
    const post = await presign();

    const response = await submit({ fields: { ...post.fields, 'x-ignore-tracking': '1' }, file: pngBytes(post.size) });

    expect(response.status).toBe(204);
  });

  it('refuses a file larger than the signed exact size with 400 EntityTooLarge', async () => {
    const post = await presign({ size: 64 });

    const response = await submit({ fields: post.fields, file: pngBytes(65) });

    expect(response.status).toBe(400);
    expect(s3Error(response.text).code).toBe('EntityTooLarge');
  });

  it('refuses a file smaller than the signed exact size with 400 EntityTooSmall', async () => {
    const post = await presign({ size: 64 });

    const response = await submit({ fields: post.fields, file: pngBytes(63) });

    expect(response.status).toBe(400);
    expect(s3Error(response.text).code).toBe('EntityTooSmall');
  });

  it('refuses an expired policy with 403', async () => {
    const post = await presign({ expires: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const response = await submit({ fields: post.fields, file: pngBytes(post.size) });

    expect(response.status).toBe(403);
    expect(s3Error(response.text)).toEqual({ code: 'AccessDenied', message: 'Invalid according to Policy: Policy expired.' });
  });

  it('ignores fields sent after the file, so a tampered Content-Type there changes nothing', async () => {
    const post = await presign();
    const file = pngBytes(post.size);

    const response = await submit({ fields: post.fields, file, after: { 'Content-Type': 'text/html', 'x-amz-meta-foo': 'bar' } });

    expect(response.status).toBe(204);
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: post.key }));
    expect(object.ContentType).toBe('image/png');
    expect(object.Metadata).toEqual({ 'file-id': post.fileId });
  });

  it('refuses a policy signed with an unknown access key id with 403 InvalidAccessKeyId', async () => {
    const stranger = new S3Client({
      endpoint: front.url,
      forcePathStyle: true,
      region,
      credentials: { accessKeyId: 'AKIDSTRANGER', secretAccessKey: 'secret' },
    });
    const post = await presign({ client: stranger });
    stranger.destroy();

    const response = await submit({ fields: post.fields, file: pngBytes(post.size) });

    expect(response.status).toBe(403);
    expect(s3Error(response.text).code).toBe('InvalidAccessKeyId');
    expect(response.text).toContain('<AWSAccessKeyId>AKIDSTRANGER</AWSAccessKeyId>');
  });

  it("answers a browser's form POST with the bucket's CORS headers, taken from s3rver's CORS rules", async () => {
    const post = await createPresignedPost(s3, {
      Bucket: corsBucket,
      Key: 'uploads/cors.png',
      Conditions: [['content-length-range', 0, 1024]],
    });
    const form = new FormData();
    for (const [name, value] of Object.entries(post.fields)) form.append(name, value);
    form.append('file', new Blob([pngBytes(10)]), 'cors.png');

    const response = await fetch(post.url, { method: 'POST', body: form, headers: { origin: corsOrigin } });

    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(corsOrigin);
    expect(response.headers.get('access-control-expose-headers')).toBe('ETag');
  });

  it('refuses a post without a file with 400', async () => {
    const post = await presign();

    const response = await submit({ fields: post.fields });

    expect(response.status).toBe(400);
    expect(s3Error(response.text).code).toBe('InvalidArgument');
  });

  it('keeps answering 204 when the ObjectCreated callback throws, logging one JSON line to stderr', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      failNextCallback = true;
      const post = await presign();

      const response = await submit({ fields: post.fields, file: pngBytes(post.size) });

      expect(response.status).toBe(204);
      await vi.waitFor(() => expect(stderr).toHaveBeenCalled());
      const line = String(stderr.mock.calls[0]?.[0]);
      expect(line.endsWith('\n')).toBe(true);
      expect(JSON.parse(line)).toMatchObject({ level: 'error', error: { message: 'subscriber exploded' } });
    } finally {
      stderr.mockRestore();
    }
  });
});

describe('S3 front: proxied S3 REST API', () => {
  it('proxies PutObject and emits ObjectCreated:Put with the stored size and ETag', async () => {
    const key = `direct/${randomUUID()} copy.txt`;
    const body = Buffer.from('hello through the front');

    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'text/plain' }));

    expect(put.ETag).toBe(`"${md5(body)}"`);
    const event = await waitForEvent(
      (e) => e.Records[0]?.eventName === 'ObjectCreated:Put' && decodeEventKey(e.Records[0].s3.object.key) === key,
    );
    expect(event.Records[0]?.s3.object).toMatchObject({ size: body.length, eTag: md5(body) });
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect(await object.Body!.transformToString()).toBe('hello through the front');
  });

  it('emits ObjectCreated:CompleteMultipartUpload for a completed multipart upload', async () => {
    const key = `multipart/${randomUUID()}.bin`;
    const part = pngBytes(1024);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    const { ETag } = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 1, Body: part }));

    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: [{ ETag, PartNumber: 1 }] } }),
    );

    const event = await waitForEvent(
      (e) => e.Records[0]?.eventName === 'ObjectCreated:CompleteMultipartUpload' && decodeEventKey(e.Records[0].s3.object.key) === key,
    );
    expect(event.Records[0]?.s3.object.size).toBe(part.length);
    expect(events.some((e) => e.Records[0]?.eventName === 'ObjectCreated:Put' && decodeEventKey(e.Records[0].s3.object.key) === key)).toBe(
      false,
    );
  });

  it('passes errors from s3rver through unchanged', async () => {
    // Signed: the front answers unsigned requests 403 itself, as S3 does for a private bucket.
    const response = await fetch(await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: `does-not-exist-${randomUUID()}` })));

    expect(response.status).toBe(404);
    expect(s3Error(await response.text()).code).toBe('NoSuchKey');
  });
});
