/**
 * The REST half of the local S3 front: signed requests streamed to s3rver,
 * with the ObjectCreated notifications S3 would send for them.
 */
import {
  type Agent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { pipeline } from 'node:stream';
import { HeadObjectCommand, PutObjectTaggingCommand, type S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import { logError, newHostId, newRequestId, S3ErrorResponse, sendError } from './s3-errors.js';
import { objectCreatedEvent, type ObjectCreatedEventName } from './s3-events.js';
import type { S3FrontOptions } from './s3-front.js';

/** Per RFC 9110 these describe one connection, not the message, so they must not be forwarded. */
const HOP_BY_HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

/** Query parameters that do not turn an object PUT into a sub-resource request (presigned URLs carry them). */
const isSigningQueryParam = (name: string): boolean => /^x-amz-/i.test(name) || name === 'x-id';

export interface FrontContext {
  options: S3FrontOptions;
  upstream: URL;
  agent: Agent;
  s3: S3Client;
  notify: (build: () => Promise<S3Event>) => void;
}

/**
 * Streams a request the front has verified (see verifyRequestSignature) to
 * s3rver and the answer back unchanged, but for `X-Content-Type-Options: nosniff`
 * on every GET and HEAD, so a file is never read as a type it was not served
 * as (DESIGN.md, "Files are served so they cannot script"; s3rver honours the
 * presigned `response-content-type` and `response-content-disposition` as S3
 * does). The Host header is rewritten because
 * s3rver treats any non-IP, non-localhost host as a virtual-hosted bucket
 * name. s3rver ignores `x-amz-tagging` on PUT, so the front applies it before
 * answering, as S3 stores the tags with the object.
 */
export function proxy(context: FrontContext, req: IncomingMessage, res: ServerResponse, url: URL): void {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !HOP_BY_HOP_HEADERS.has(name)) headers[name] = value;
  }
  headers.host = context.upstream.host;
  const created = createdObjectOf(req.method ?? 'GET', url, req.headers);

  const upstreamReq = httpRequest({
    host: context.upstream.hostname,
    port: context.upstream.port,
    method: req.method,
    path: req.url,
    headers,
    agent: context.agent,
  });
  upstreamReq.on('response', (upstreamRes) => {
    const status = upstreamRes.statusCode ?? 502;
    const rawHeaders: string[] = [];
    for (let i = 0; i + 1 < upstreamRes.rawHeaders.length; i += 2) {
      const name = upstreamRes.rawHeaders[i] as string;
      if (!HOP_BY_HOP_HEADERS.has(name.toLowerCase()) && name.toLowerCase() !== 'x-content-type-options')
        rawHeaders.push(name, upstreamRes.rawHeaders[i + 1] as string);
    }
    if (req.method === 'GET' || req.method === 'HEAD') rawHeaders.push('X-Content-Type-Options', 'nosniff');
    const tagging = headerValue(req.headers['x-amz-tagging']);
    const tagged =
      created?.eventName === 'ObjectCreated:Put' && tagging !== undefined && status >= 200 && status < 300
        ? context.s3.send(new PutObjectTaggingCommand({ Bucket: created.bucket, Key: created.key, Tagging: { TagSet: tagSetOf(tagging) } }))
        : Promise.resolve();
    tagged.then(
      () => {
        res.writeHead(status, upstreamRes.statusMessage, rawHeaders);
        pipeline(upstreamRes, res, (error) => {
          if (error === undefined || error === null) notifyCreated(context, req, url, upstreamRes.headers, created, status);
        });
      },
      (error: unknown) => {
        upstreamRes.resume();
        logError('s3-front: tagging the object failed', error);
        sendError(res, new S3ErrorResponse(500, 'InternalError', 'We encountered an internal error. Please try again.'));
      },
    );
  });
  let clientGone = false;
  upstreamReq.on('error', (error) => {
    if (clientGone) return;
    if (res.headersSent) {
      res.destroy(error);
      return;
    }
    logError('s3-front: upstream request failed', error);
    sendError(res, new S3ErrorResponse(502, 'ServiceUnavailable', `The S3 emulator at ${context.upstream.origin} is unreachable.`));
  });
  res.on('close', () => {
    if (!res.writableFinished) {
      clientGone = true;
      upstreamReq.destroy();
    }
  });
  req.pipe(upstreamReq);
}

function notifyCreated(
  context: FrontContext,
  req: IncomingMessage,
  url: URL,
  answered: IncomingHttpHeaders,
  created: CreatedObject | undefined,
  status: number,
): void {
  if (created === undefined || status < 200 || status >= 300) return;
  const requestId = headerValue(answered['x-amz-request-id']) ?? newRequestId();
  const hostId = headerValue(answered['x-amz-id-2']) ?? newHostId();
  context.notify(async () => {
    const head = await context.s3.send(new HeadObjectCommand({ Bucket: created.bucket, Key: created.key }));
    return objectCreatedEvent({
      eventName: created.eventName,
      region: context.options.region,
      bucket: created.bucket,
      key: created.key,
      size: head.ContentLength ?? 0,
      eTag: head.ETag ?? '',
      principalAccessKeyId: accessKeyIdOf(req, url),
      ownerAccessKeyId: context.options.credentials.accessKeyId,
      sourceIp: sourceIpOf(req),
      requestId,
      hostId,
    });
  });
}

/** `x-amz-tagging: k=v&k2=v2`, URL-encoded as S3 takes it. */
function tagSetOf(header: string): { Key: string; Value: string }[] {
  return [...new URLSearchParams(header)].map(([Key, Value]) => ({ Key, Value }));
}

interface CreatedObject {
  bucket: string;
  key: string;
  eventName: ObjectCreatedEventName;
}

/** Decides from the request alone which S3 operations create objects, mirroring S3's routing. */
function createdObjectOf(method: string, url: URL, headers: IncomingHttpHeaders): CreatedObject | undefined {
  const match = /^\/([^/]+)\/(.+)$/.exec(url.pathname);
  if (match === null) return undefined;
  let bucket: string;
  let key: string;
  try {
    bucket = decodeURIComponent(match[1] as string);
    key = decodeURIComponent(match[2] as string);
  } catch {
    return undefined;
  }
  const params = [...url.searchParams.keys()];
  if (method === 'PUT' && params.every(isSigningQueryParam)) {
    return { bucket, key, eventName: headers['x-amz-copy-source'] === undefined ? 'ObjectCreated:Put' : 'ObjectCreated:Copy' };
  }
  if (method === 'POST' && url.searchParams.has('uploadId')) {
    return { bucket, key, eventName: 'ObjectCreated:CompleteMultipartUpload' };
  }
  return undefined;
}

function accessKeyIdOf(req: IncomingMessage, url: URL): string | undefined {
  const fromHeader = /Credential=([^/,\s]+)\//.exec(req.headers.authorization ?? '')?.[1];
  return fromHeader ?? url.searchParams.get('X-Amz-Credential')?.split('/')[0];
}

export function sourceIpOf(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
