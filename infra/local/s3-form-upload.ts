/**
 * The browser form POST of the local S3 front, end to end: judged on the fields before the file
 * (s3-form-post.ts), the file streamed to a temporary file and stored in s3rver from there, and
 * answered and notified as S3 does.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3ServiceException,
  type PutObjectCommandInput,
  type PutObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { discardRest, escapeXml, logError, newHostId, newRequestId, refuse, S3ErrorResponse } from './s3-errors.js';
import { objectCreatedEvent } from './s3-events.js';
import { metadataOf, readFormHead, receiveFile, verifyPost } from './s3-form-post.js';
import { sourceIpOf, type FrontContext } from './s3-proxy.js';

/** Pulls the request's chunks one at a time, leaving the stream paused (and resumable) when not asked. */
function pull(req: IncomingMessage): AsyncIterator<Buffer> {
  return {
    async next() {
      for (;;) {
        const chunk = req.read() as Buffer | null;
        if (chunk !== null) return { value: chunk, done: false };
        if (req.readableEnded) return { value: undefined, done: true };
        if (req.destroyed) throw new Error('The client closed the connection before the upload ended.');
        await new Promise<void>((resolve) => {
          const wake = () => {
            for (const event of ['readable', 'end', 'close']) req.off(event, wake);
            resolve();
          };
          for (const event of ['readable', 'end', 'close']) req.on(event, wake);
        });
      }
    },
  };
}

/**
 * A browser form POST, judged as S3 judges it: policy, signature and tagging from the fields before
 * the file, before a byte of the file is read; then the file streamed to a temporary file, counted
 * against the policy's size range as it arrives, and stored from there.
 */
export async function handleFormPost(context: FrontContext, req: IncomingMessage, res: ServerResponse, bucket: string): Promise<void> {
  const cors = await corsHeadersFor(context, req, bucket);
  let spool: string | undefined;
  try {
    const head = await readFormHead(pull(req), req.headers['content-type'] ?? '');
    const verified = verifyPost(context.options, bucket, head.fields, head.filename);
    spool = await mkdtemp(join(tmpdir(), 's3-front-'));
    const path = join(spool, 'file');
    const size = await receiveFile(head, path, verified);
    discardRest(req);

    const fields = head.fields;
    let eTag: string;
    try {
      const stored = await putFromFile(context.s3, path, {
        Bucket: bucket,
        Key: verified.key,
        ContentLength: size,
        ContentType: fields.get('content-type')?.value ?? 'binary/octet-stream',
        CacheControl: fields.get('cache-control')?.value,
        ContentDisposition: fields.get('content-disposition')?.value,
        ContentEncoding: fields.get('content-encoding')?.value,
        ContentLanguage: fields.get('content-language')?.value,
        Metadata: metadataOf(fields),
      });
      eTag = quoteETag(stored.ETag ?? '');
      if (verified.tags)
        await context.s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: verified.key, Tagging: { TagSet: verified.tags } }));
    } catch (error) {
      if (error instanceof S3ServiceException) {
        throw new S3ErrorResponse(error.$metadata.httpStatusCode ?? 500, error.name, error.message);
      }
      throw error;
    }
    answerPost(context, req, res, { bucket, key: verified.key, eTag, size, accessKeyId: verified.accessKeyId, cors, fields: head.fields });
  } catch (error) {
    if (error instanceof S3ErrorResponse) {
      refuse(req, res, error, cors);
      return;
    }
    throw error;
  } finally {
    if (spool !== undefined) await rm(spool, { recursive: true, force: true });
  }
}

/**
 * PutObject from a file, at most three times, each with a fresh stream (the SDK cannot retry a
 * streamed body it has consumed): again after a stale keep-alive socket (s3rver closes idle ones) and
 * after a 5xx answer (S3's InternalError says "try again"; s3rver answered one to a 17 KB upload in
 * a full test run), never after a 4xx.
 */
export async function putFromFile(s3: S3Client, path: string, input: Omit<PutObjectCommandInput, 'Body'>): Promise<PutObjectCommandOutput> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await s3.send(new PutObjectCommand({ ...input, Body: createReadStream(path) }));
    } catch (error) {
      const answered = error instanceof S3ServiceException ? (error.$metadata.httpStatusCode ?? 500) : undefined;
      if ((answered !== undefined && answered < 500) || attempt === 3) throw error;
      logError(`s3-front: PutObject of ${input.Key} failed (attempt ${attempt}); trying again`, error);
    }
  }
}

interface StoredPost {
  bucket: string;
  key: string;
  eTag: string;
  size: number;
  accessKeyId: string;
  cors: OutgoingHttpHeaders;
  fields: Map<string, { value: string }>;
}

/** S3's answer to a stored POST (redirect, 201 document, or 200/204), then its notification. */
function answerPost(context: FrontContext, req: IncomingMessage, res: ServerResponse, post: StoredPost): void {
  const { bucket, key, eTag, fields } = post;
  const requestId = newRequestId();
  const hostId = newHostId();
  const location = `http://${req.headers.host ?? 'localhost'}/${encodeURIComponent(bucket)}/${encodePathKey(key)}`;
  const headers: OutgoingHttpHeaders = {
    ...post.cors,
    ETag: eTag,
    Location: location,
    'x-amz-request-id': requestId,
    'x-amz-id-2': hostId,
  };

  const redirect = redirectTarget(fields.get('success_action_redirect')?.value ?? fields.get('redirect')?.value);
  if (redirect !== undefined) {
    redirect.searchParams.set('bucket', bucket);
    redirect.searchParams.set('key', key);
    redirect.searchParams.set('etag', eTag);
    res.writeHead(303, { ...headers, Location: redirect.href, 'Content-Length': 0 });
    res.end();
  } else if (fields.get('success_action_status')?.value === '201') {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?>\n' +
      `<PostResponse><Location>${escapeXml(location)}</Location><Bucket>${escapeXml(bucket)}</Bucket>` +
      `<Key>${escapeXml(key)}</Key><ETag>${escapeXml(eTag)}</ETag></PostResponse>`;
    res.writeHead(201, { ...headers, 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(xml) });
    res.end(xml);
  } else {
    res.writeHead(fields.get('success_action_status')?.value === '200' ? 200 : 204, headers);
    res.end();
  }

  context.notify(async () =>
    objectCreatedEvent({
      eventName: 'ObjectCreated:Post',
      region: context.options.region,
      bucket,
      key,
      size: post.size,
      eTag,
      principalAccessKeyId: post.accessKeyId,
      ownerAccessKeyId: context.options.credentials.accessKeyId,
      sourceIp: sourceIpOf(req),
      requestId,
      hostId,
    }),
  );
}

function redirectTarget(value: string | undefined): URL | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * Browsers read the POST response only if it carries CORS headers. s3rver holds
 * the bucket's CORS rules, so ask it with a cheap HEAD that carries the same
 * Origin instead of re-implementing rule matching here.
 */
async function corsHeadersFor(context: FrontContext, req: IncomingMessage, bucket: string): Promise<OutgoingHttpHeaders> {
  const origin = req.headers.origin;
  if (origin === undefined) return {};
  return new Promise((resolve) => {
    const probe = httpRequest(
      {
        host: context.upstream.hostname,
        port: context.upstream.port,
        method: 'HEAD',
        path: `/${encodeURIComponent(bucket)}`,
        headers: { host: context.upstream.host, origin, 'access-control-request-method': 'POST' },
        agent: context.agent,
      },
      (res) => {
        res.resume();
        const headers: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined && (name.startsWith('access-control-') || name === 'vary')) headers[name] = value;
        }
        resolve(headers);
      },
    );
    probe.on('error', () => resolve({}));
    probe.end();
  });
}

/** Path-style object URLs keep `/` between key segments, as S3's Location header does. */
function encodePathKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

function quoteETag(eTag: string): string {
  return eTag.startsWith('"') ? eTag : `"${eTag}"`;
}
