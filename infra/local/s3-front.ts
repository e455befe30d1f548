/**
 * Local S3 front: an HTTP server that sits before s3rver so the local stack
 * behaves like AWS S3 where s3rver does not.
 *
 * s3rver accepts any browser form POST without looking at its policy, so a
 * client bug in presigned-POST handling (a wrong Content-Type, a missing
 * metadata field, a file of the wrong size) would only surface once deployed.
 * It also emits event notifications with raw keys and an eventVersion of 2.0,
 * unlike AWS. This front verifies POST policies as S3 does, stores accepted
 * uploads in s3rver, proxies every other request untouched, and emits
 * AWS-shaped ObjectCreated events itself.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';
import { HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import { parseMultipart, type MultipartPart } from '../../shared/http/multipart.js';

export interface S3FrontOptions {
  /** 0 = ephemeral; read the bound port from the returned {@link S3Front}. */
  port: number;
  /** Defaults to 127.0.0.1 so the emulator is never exposed beyond the machine by accident. */
  host?: string;
  /** s3rver base URL, e.g. http://127.0.0.1:4569. */
  upstreamEndpoint: string;
  region: string;
  /** The only key pair presigned POST policies are accepted for, and the one used to talk to s3rver. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Called after the HTTP response, like S3's asynchronous notifications; failures are logged, never surfaced. */
  onObjectCreated?: (event: S3Event) => void | Promise<void>;
}

export interface S3Front {
  url: string;
  port: number;
  /** Stops accepting connections and waits for in-flight notifications, so tests can assert on them. */
  close(): Promise<void>;
}

/** Bounds memory, since form uploads are buffered whole to be verified before storing. */
const MAX_FORM_POST_BYTES = 512 * 1024 * 1024;

const SIGV4_ALGORITHM = 'AWS4-HMAC-SHA256';

/** Form fields S3 never requires a policy condition for. */
const UNCHECKED_FIELDS = new Set(['file', 'policy', 'x-amz-signature']);

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

type ObjectCreatedEventName = 'ObjectCreated:Post' | 'ObjectCreated:Put' | 'ObjectCreated:Copy' | 'ObjectCreated:CompleteMultipartUpload';

/** A refusal answered with S3's XML error document. */
class S3ErrorResponse extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'S3ErrorResponse';
  }
}

interface FormField {
  /** The name as sent, so error messages echo the client's own spelling. */
  name: string;
  value: string;
}

type Condition =
  | { kind: 'eq'; field: string; value: string; label: string }
  | { kind: 'starts-with'; field: string; prefix: string; label: string }
  | { kind: 'content-length-range'; min: number; max: number };

interface VerifiedPost {
  key: string;
  accessKeyId: string;
}

/**
 * Starts the front. It does not start s3rver: the caller owns the emulator's
 * lifecycle, its buckets, and its data directory.
 */
export async function startS3Front(options: S3FrontOptions): Promise<S3Front> {
  const host = options.host ?? '127.0.0.1';
  const upstream = new URL(options.upstreamEndpoint);
  if (upstream.protocol !== 'http:') {
    throw new Error(`s3-front only proxies to http:// upstreams, got ${options.upstreamEndpoint}`);
  }
  const agent = new Agent({ keepAlive: true });
  const s3 = new S3Client({
    endpoint: options.upstreamEndpoint,
    forcePathStyle: true,
    region: options.region,
    credentials: options.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const pending = new Set<Promise<void>>();

  const notify = (build: () => Promise<S3Event>): void => {
    const callback = options.onObjectCreated;
    if (callback === undefined) return;
    const task = (async () => {
      try {
        await callback(await build());
      } catch (error) {
        logError('s3-front: ObjectCreated notification failed', error);
      }
    })();
    pending.add(task);
    void task.finally(() => pending.delete(task));
  };

  const context: FrontContext = { options, upstream, agent, s3, notify };
  const server = createServer((req, res) => {
    handle(context, req, res).catch((error: unknown) => {
      logError('s3-front: request failed', error);
      if (!res.headersSent) {
        sendError(res, new S3ErrorResponse(500, 'InternalError', 'We encountered an internal error. Please try again.'));
      } else {
        res.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    port,
    async close() {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      });
      await Promise.allSettled([...pending]);
      agent.destroy();
      s3.destroy();
    },
  };
}

interface FrontContext {
  options: S3FrontOptions;
  upstream: URL;
  agent: Agent;
  s3: S3Client;
  notify: (build: () => Promise<S3Event>) => void;
}

async function handle(context: FrontContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://front.invalid');
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const isFormPost =
    req.method === 'POST' &&
    segments.length === 1 &&
    url.search === '' &&
    /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');
  if (isFormPost) {
    let bucket: string;
    try {
      bucket = decodeURIComponent(segments[0] as string);
    } catch {
      sendError(res, new S3ErrorResponse(400, 'InvalidURI', "Couldn't parse the specified URI."));
      return;
    }
    await handleFormPost(context, req, res, bucket);
  } else {
    proxy(context, req, res, url);
  }
}

async function handleFormPost(context: FrontContext, req: IncomingMessage, res: ServerResponse, bucket: string): Promise<void> {
  const cors = await corsHeadersFor(context, req, bucket);
  try {
    const body = await readBody(req, MAX_FORM_POST_BYTES);
    let parts: MultipartPart[];
    try {
      parts = parseMultipart(body, req.headers['content-type'] ?? '');
    } catch (error) {
      throw new S3ErrorResponse(
        400,
        'MalformedPOSTRequest',
        `The body of your POST request is not well-formed multipart/form-data. ${(error as Error).message}`,
      );
    }

    const fileIndex = parts.findIndex((part) => part.name.toLowerCase() === 'file');
    const file = parts[fileIndex];
    if (file === undefined) {
      throw new S3ErrorResponse(400, 'InvalidArgument', 'POST requires exactly one file upload per request. The form has no field named file.', {
        ArgumentName: 'file',
        ArgumentValue: '0',
      });
    }
    const fields = collectFields(parts.slice(0, fileIndex));
    const verified = verifyPost(context.options, bucket, fields, file);

    const contentType = fields.get('content-type')?.value;
    let eTag: string;
    try {
      const stored = await context.s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: verified.key,
          Body: file.data,
          ContentType: contentType ?? 'binary/octet-stream',
          CacheControl: fields.get('cache-control')?.value,
          ContentDisposition: fields.get('content-disposition')?.value,
          ContentEncoding: fields.get('content-encoding')?.value,
          ContentLanguage: fields.get('content-language')?.value,
          Metadata: metadataOf(fields),
        }),
      );
      eTag = quoteETag(stored.ETag ?? '');
    } catch (error) {
      if (error instanceof S3ServiceException) {
        throw new S3ErrorResponse(error.$metadata.httpStatusCode ?? 500, error.name, error.message);
      }
      throw error;
    }

    const requestId = newRequestId();
    const hostId = newHostId();
    const location = `http://${req.headers.host ?? 'localhost'}/${encodeURIComponent(bucket)}/${encodePathKey(verified.key)}`;
    const headers: OutgoingHttpHeaders = {
      ...cors,
      ETag: eTag,
      Location: location,
      'x-amz-request-id': requestId,
      'x-amz-id-2': hostId,
    };

    const redirect = redirectTarget(fields.get('success_action_redirect')?.value ?? fields.get('redirect')?.value);
    if (redirect !== undefined) {
      redirect.searchParams.set('bucket', bucket);
      redirect.searchParams.set('key', verified.key);
      redirect.searchParams.set('etag', eTag);
      res.writeHead(303, { ...headers, Location: redirect.href, 'Content-Length': 0 });
      res.end();
    } else {
      const status = fields.get('success_action_status')?.value;
      if (status === '201') {
        const xml =
          '<?xml version="1.0" encoding="UTF-8"?>\n' +
          `<PostResponse><Location>${escapeXml(location)}</Location><Bucket>${escapeXml(bucket)}</Bucket>` +
          `<Key>${escapeXml(verified.key)}</Key><ETag>${escapeXml(eTag)}</ETag></PostResponse>`;
        res.writeHead(201, { ...headers, 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(xml) });
        res.end(xml);
      } else {
        res.writeHead(status === '200' ? 200 : 204, headers);
        res.end();
      }
    }

    const size = file.data.length;
    context.notify(async () =>
      objectCreatedEvent({
        eventName: 'ObjectCreated:Post',
        region: context.options.region,
        bucket,
        key: verified.key,
        size,
        eTag,
        principalAccessKeyId: verified.accessKeyId,
        ownerAccessKeyId: context.options.credentials.accessKeyId,
        sourceIp: sourceIpOf(req),
        requestId,
        hostId,
      }),
    );
  } catch (error) {
    if (error instanceof S3ErrorResponse) {
      sendError(res, error, cors);
      return;
    }
    throw error;
  }
}

/**
 * Keeps the first value of each field (names are case-insensitive in S3) and
 * refuses duplicates, so the value checked against the policy is always the
 * value that gets stored.
 */
function collectFields(parts: MultipartPart[]): Map<string, FormField> {
  const fields = new Map<string, FormField>();
  for (const part of parts) {
    const lower = part.name.toLowerCase();
    if (fields.has(lower)) {
      throw new S3ErrorResponse(400, 'InvalidArgument', `POST form fields must be unique; ${part.name} was sent more than once.`, {
        ArgumentName: part.name,
      });
    }
    fields.set(lower, { name: part.name, value: part.data.toString('utf8') });
  }
  return fields;
}

/**
 * Verifies a SigV4 POST the way S3 does: authenticity of the policy first, then
 * its expiry, then every condition, then that no field escaped the policy.
 * Failures name the offending field so a developer can fix the client quickly.
 */
function verifyPost(options: S3FrontOptions, bucket: string, fields: Map<string, FormField>, file: MultipartPart): VerifiedPost {
  const required = (name: string): string => {
    const value = fields.get(name.toLowerCase())?.value;
    if (value === undefined) {
      throw new S3ErrorResponse(
        403,
        'AccessDenied',
        `Bucket POST must contain a field named '${name}'. If it is specified, please check the order of the fields.`,
      );
    }
    return value;
  };
  const policy = required('Policy');
  const algorithm = required('X-Amz-Algorithm');
  const credential = required('X-Amz-Credential');
  const amzDate = required('X-Amz-Date');
  const signature = required('X-Amz-Signature');

  if (algorithm !== SIGV4_ALGORITHM) {
    throw new S3ErrorResponse(403, 'AccessDenied', `X-Amz-Algorithm only supports "${SIGV4_ALGORITHM}", got "${algorithm}".`);
  }

  const scope = /^([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request$/.exec(credential);
  if (scope === null) {
    throw new S3ErrorResponse(
      403,
      'AccessDenied',
      `Error parsing the X-Amz-Credential parameter; expected "<access key id>/<yyyymmdd>/<region>/s3/aws4_request", got "${credential}".`,
    );
  }
  const [, accessKeyId = '', scopeDate = '', scopeRegion = ''] = scope;
  if (accessKeyId !== options.credentials.accessKeyId) {
    throw new S3ErrorResponse(
      403,
      'InvalidAccessKeyId',
      `The AWS Access Key Id you provided does not exist in our records. X-Amz-Credential names access key "${accessKeyId}".`,
      { AWSAccessKeyId: accessKeyId },
    );
  }
  if (scopeRegion !== options.region) {
    throw new S3ErrorResponse(
      403,
      'AccessDenied',
      `Error parsing the X-Amz-Credential parameter; the region '${scopeRegion}' is wrong; expecting '${options.region}'`,
    );
  }
  if (!/^\d{8}T\d{6}Z$/.test(amzDate)) {
    throw new S3ErrorResponse(403, 'AccessDenied', `X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'", got "${amzDate}".`);
  }
  if (amzDate.slice(0, 8) !== scopeDate) {
    throw new S3ErrorResponse(
      403,
      'AccessDenied',
      `The date in X-Amz-Credential (${scopeDate}) does not match the date in X-Amz-Date (${amzDate}).`,
    );
  }

  const expected = createHmac('sha256', signingKey(options.credentials.secretAccessKey, scopeDate, scopeRegion))
    .update(policy, 'utf8')
    .digest();
  const provided = /^[0-9a-f]{64}$/i.test(signature) ? Buffer.from(signature, 'hex') : undefined;
  if (provided === undefined || !timingSafeEqual(provided, expected)) {
    throw new S3ErrorResponse(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method. ' +
        'X-Amz-Signature must be the SigV4 signature of the Policy field with the key named in X-Amz-Credential.',
      { AWSAccessKeyId: accessKeyId, StringToSign: policy, SignatureProvided: signature },
    );
  }

  const { expiration, conditions } = decodePolicy(policy);
  if (Date.now() > expiration) {
    throw new S3ErrorResponse(403, 'AccessDenied', 'Invalid according to Policy: Policy expired.');
  }

  const covered = new Set<string>();
  const lengthRanges: Array<{ min: number; max: number }> = [];
  for (const condition of conditions) {
    if (condition.kind === 'content-length-range') {
      lengthRanges.push(condition);
      continue;
    }
    covered.add(condition.field);
    const candidates =
      condition.field === 'bucket'
        ? [bucket, ...(fields.has('bucket') ? [fields.get('bucket')?.value] : [])]
        : [fields.get(condition.field)?.value];
    const satisfied = candidates.every((value) =>
      value === undefined ? false : condition.kind === 'eq' ? value === condition.value : value.startsWith(condition.prefix),
    );
    if (!satisfied) {
      throw new S3ErrorResponse(403, 'AccessDenied', `Invalid according to Policy: Policy Condition failed: ${condition.label}`);
    }
  }

  const extra = [...fields.entries()]
    .filter(([lower]) => !UNCHECKED_FIELDS.has(lower) && !lower.startsWith('x-ignore-') && !covered.has(lower))
    .map(([, field]) => field.name);
  if (extra.length > 0) {
    throw new S3ErrorResponse(403, 'AccessDenied', `Invalid according to Policy: Extra input fields: ${extra.join(', ')}`);
  }

  const rawKey = fields.get('key')?.value;
  if (rawKey === undefined) {
    throw new S3ErrorResponse(
      400,
      'InvalidArgument',
      "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.",
      { ArgumentName: 'key', ArgumentValue: '' },
    );
  }
  const key = rawKey.replaceAll('${filename}', file.filename ?? '');
  if (key.length === 0) {
    throw new S3ErrorResponse(400, 'InvalidArgument', 'User key must have a length greater than 0.', { ArgumentName: 'key', ArgumentValue: '' });
  }

  const size = file.data.length;
  for (const range of lengthRanges) {
    if (size < range.min) {
      throw new S3ErrorResponse(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed size', {
        ProposedSize: String(size),
        MinSizeAllowed: String(range.min),
      });
    }
    if (size > range.max) {
      throw new S3ErrorResponse(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', {
        ProposedSize: String(size),
        MaxSizeAllowed: String(range.max),
      });
    }
  }

  return { key, accessKeyId };
}

/** Only reachable with a correctly signed policy, hence S3's 400 InvalidPolicyDocument rather than 403. */
function decodePolicy(policy: string): { expiration: number; conditions: Condition[] } {
  const invalid = (message: string) => new S3ErrorResponse(400, 'InvalidPolicyDocument', `Invalid Policy: ${message}`);
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(policy, 'base64').toString('utf8'));
  } catch {
    throw invalid('Invalid JSON.');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw invalid('Invalid JSON.');
  const { expiration, conditions } = document as { expiration?: unknown; conditions?: unknown };
  if (typeof expiration !== 'string') throw invalid('Policy missing expiration.');
  const expiresAt = Date.parse(expiration);
  if (Number.isNaN(expiresAt)) throw invalid(`Invalid 'expiration' value: '${expiration}'`);
  if (!Array.isArray(conditions)) throw invalid('Policy missing conditions.');
  return { expiration: expiresAt, conditions: conditions.map((condition) => parseCondition(condition, invalid)) };
}

function parseCondition(raw: unknown, invalid: (message: string) => S3ErrorResponse): Condition {
  const label = (op: string, field: string, value: string) => `[${[op, `$${field}`, value].map((part) => JSON.stringify(part)).join(', ')}]`;
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const entries = Object.entries(raw);
    const [entry] = entries;
    if (entries.length !== 1 || entry === undefined) {
      throw invalid('Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.');
    }
    const [field, value] = entry;
    if (typeof value !== 'string') throw invalid(`Invalid Simple-Condition: value of ${field} must be a string.`);
    return { kind: 'eq', field: field.toLowerCase(), value, label: label('eq', field, value) };
  }
  if (!Array.isArray(raw) || raw.length !== 3 || typeof raw[0] !== 'string') {
    throw invalid(`Invalid Condition: ${JSON.stringify(raw)}`);
  }
  const [opRaw, first, second] = raw as [string, unknown, unknown];
  const op = opRaw.toLowerCase();
  if (op === 'content-length-range') {
    const min = Number(first);
    const max = Number(second);
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min) {
      throw invalid(`Invalid content-length-range: ${JSON.stringify(raw)}`);
    }
    return { kind: 'content-length-range', min, max };
  }
  if ((op !== 'eq' && op !== 'starts-with') || typeof first !== 'string' || !first.startsWith('$') || typeof second !== 'string') {
    throw invalid(`Invalid Condition: ${JSON.stringify(raw)}`);
  }
  const field = first.slice(1);
  return op === 'eq'
    ? { kind: 'eq', field: field.toLowerCase(), value: second, label: label(opRaw, field, second) }
    : { kind: 'starts-with', field: field.toLowerCase(), prefix: second, label: label(opRaw, field, second) };
}

function signingKey(secretAccessKey: string, date: string, region: string): Buffer {
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
  return hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), 's3'), 'aws4_request');
}

/**
 * Non-ASCII metadata cannot travel in HTTP headers; S3 stores such values
 * RFC 2047-encoded, so the front does the same instead of failing the upload.
 */
function metadataOf(fields: Map<string, FormField>): Record<string, string> | undefined {
  const metadata: Record<string, string> = {};
  for (const [lower, field] of fields) {
    if (!lower.startsWith('x-amz-meta-')) continue;
    metadata[lower.slice('x-amz-meta-'.length)] = /^[\x20-\x7e]*$/.test(field.value)
      ? field.value
      : `=?UTF-8?B?${Buffer.from(field.value, 'utf8').toString('base64')}?=`;
  }
  return Object.keys(metadata).length > 0 ? metadata : undefined;
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

/** Buffers the body; past the limit it keeps draining so the client still receives the refusal. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > limit) {
        reject(
          new S3ErrorResponse(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', {
            ProposedSize: String(size),
            MaxSizeAllowed: String(limit),
          }),
        );
      } else {
        resolve(Buffer.concat(chunks, size));
      }
    });
    req.on('error', reject);
  });
}

/**
 * Streams the request to s3rver and the answer back unchanged. The Host header
 * is rewritten because s3rver treats any non-IP, non-localhost host as a
 * virtual-hosted bucket name; it does not verify SigV4 signatures, so the
 * change does not invalidate the client's signature.
 */
function proxy(context: FrontContext, req: IncomingMessage, res: ServerResponse, url: URL): void {
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
      if (!HOP_BY_HOP_HEADERS.has(name.toLowerCase())) rawHeaders.push(name, upstreamRes.rawHeaders[i + 1] as string);
    }
    res.writeHead(status, upstreamRes.statusMessage, rawHeaders);
    pipeline(upstreamRes, res, (error) => {
      if (error !== undefined && error !== null) return;
      if (created !== undefined && status >= 200 && status < 300) {
        const requestId = headerValue(upstreamRes.headers['x-amz-request-id']) ?? newRequestId();
        const hostId = headerValue(upstreamRes.headers['x-amz-id-2']) ?? newHostId();
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
    });
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

/** Decides from the request alone which S3 operations create objects, mirroring S3's routing. */
function createdObjectOf(
  method: string,
  url: URL,
  headers: IncomingHttpHeaders,
): { bucket: string; key: string; eventName: ObjectCreatedEventName } | undefined {
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

interface ObjectCreatedDetails {
  eventName: ObjectCreatedEventName;
  region: string;
  bucket: string;
  key: string;
  size: number;
  eTag: string;
  principalAccessKeyId: string | undefined;
  ownerAccessKeyId: string;
  sourceIp: string;
  requestId: string;
  hostId: string;
}

function objectCreatedEvent(details: ObjectCreatedDetails): S3Event {
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: details.region,
        eventTime: new Date().toISOString(),
        eventName: details.eventName,
        userIdentity: { principalId: details.principalAccessKeyId === undefined ? 'Anonymous' : `AWS:${details.principalAccessKeyId}` },
        requestParameters: { sourceIPAddress: details.sourceIp },
        responseElements: { 'x-amz-request-id': details.requestId, 'x-amz-id-2': details.hostId },
        s3: {
          s3SchemaVersion: '1.0',
          configurationId: 'local-s3-front',
          bucket: {
            name: details.bucket,
            ownerIdentity: { principalId: canonicalIdOf(details.ownerAccessKeyId) },
            arn: `arn:aws:s3:::${details.bucket}`,
          },
          object: {
            key: encodeEventKey(details.key),
            size: details.size,
            eTag: details.eTag.replaceAll('"', ''),
            sequencer: nextSequencer(),
          },
        },
      },
    ],
  };
}

/**
 * S3 event keys are form-urlencoded (space as `+`, `/` kept, everything outside
 * `A-Z a-z 0-9 - _ . *` percent-encoded as UTF-8), which is why handlers must
 * decode them; the emulator has to encode them too or that decoding goes untested.
 */
function encodeEventKey(key: string): string {
  return encodeURIComponent(key)
    .replace(/[!'()~]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+')
    .replaceAll('%2F', '/');
}

/** Path-style object URLs keep `/` between key segments, as S3's Location header does. */
function encodePathKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

let lastSequencer = 0n;

/** S3 sequencers only grow for a given key; a time-based counter keeps that true within one process. */
function nextSequencer(): string {
  const candidate = BigInt(Date.now()) * 1000n;
  lastSequencer = candidate > lastSequencer ? candidate : lastSequencer + 1n;
  return lastSequencer.toString(16).toUpperCase().padStart(18, '0');
}

function canonicalIdOf(accessKeyId: string): string {
  return createHash('sha256').update(accessKeyId).digest('hex').slice(0, 14).toUpperCase();
}

function accessKeyIdOf(req: IncomingMessage, url: URL): string | undefined {
  const fromHeader = /Credential=([^/,\s]+)\//.exec(req.headers.authorization ?? '')?.[1];
  return fromHeader ?? url.searchParams.get('X-Amz-Credential')?.split('/')[0];
}

function sourceIpOf(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function quoteETag(eTag: string): string {
  return eTag.startsWith('"') ? eTag : `"${eTag}"`;
}

function newRequestId(): string {
  return randomBytes(8).toString('hex').toUpperCase();
}

function newHostId(): string {
  return randomBytes(48).toString('base64');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function sendError(res: ServerResponse, error: S3ErrorResponse, extraHeaders: OutgoingHttpHeaders = {}): void {
  const requestId = newRequestId();
  const hostId = newHostId();
  const details = Object.entries(error.details)
    .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
    .join('');
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${escapeXml(error.code)}</Code><Message>${escapeXml(error.message)}</Message>${details}` +
    `<RequestId>${requestId}</RequestId><HostId>${escapeXml(hostId)}</HostId></Error>`;
  res.writeHead(error.status, {
    ...extraHeaders,
    'Content-Type': 'application/xml',
    'Content-Length': Buffer.byteLength(xml),
    'x-amz-request-id': requestId,
    'x-amz-id-2': hostId,
  });
  res.end(xml);
}

/** One JSON line on stderr, matching the rest of the stack's log format. */
function logError(message: string, error: unknown): void {
  const detail = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
  process.stderr.write(`${JSON.stringify({ level: 'error', message, time: new Date().toISOString(), error: detail })}\n`);
}
