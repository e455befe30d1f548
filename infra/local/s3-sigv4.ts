/**
 * SigV4 verification for the local S3 front, so an unsigned or mis-signed request is refused as S3
 * refuses it instead of reaching s3rver (which is started with allowMismatchedSignatures, because
 * the front rewrites the Host header on the way in).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { S3ErrorResponse } from './s3-errors.js';

export const SIGV4_ALGORITHM = 'AWS4-HMAC-SHA256';

/** S3 refuses requests whose X-Amz-Date is further than this from its clock. */
const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;

export interface SigningIdentity {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export function signingKey(secretAccessKey: string, date: string, region: string): Buffer {
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
  return hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), 's3'), 'aws4_request');
}

/**
 * Checks `<access key>/<yyyymmdd>/<region>/s3/aws4_request` against the front's identity and the
 * request date; returns the scope's date for the signing key.
 */
export function checkCredentialScope(
  identity: SigningIdentity,
  credential: string,
  amzDate: string,
): { accessKeyId: string; scopeDate: string } {
  const scope = /^([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request$/.exec(credential);
  if (scope === null) {
    throw new S3ErrorResponse(
      403,
      'AccessDenied',
      `Error parsing the X-Amz-Credential parameter; expected "<access key id>/<yyyymmdd>/<region>/s3/aws4_request", got "${credential}".`,
    );
  }
  const [, accessKeyId = '', scopeDate = '', scopeRegion = ''] = scope;
  if (accessKeyId !== identity.credentials.accessKeyId) {
    throw new S3ErrorResponse(
      403,
      'InvalidAccessKeyId',
      `The AWS Access Key Id you provided does not exist in our records. X-Amz-Credential names access key "${accessKeyId}".`,
      { AWSAccessKeyId: accessKeyId },
    );
  }
  if (scopeRegion !== identity.region) {
    throw new S3ErrorResponse(
      403,
      'AccessDenied',
      `Error parsing the X-Amz-Credential parameter; the region '${scopeRegion}' is wrong; expecting '${identity.region}'`,
    );
  }
  if (!/^\d{8}T\d{6}Z$/.test(amzDate)) {
    throw new S3ErrorResponse(
      403,
      'AccessDenied',
      `X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'", got "${amzDate}".`,
    );
  }
  if (amzDate.slice(0, 8) !== scopeDate) {
    throw new S3ErrorResponse(
      403,
      'AccessDenied',
      `The date in X-Amz-Credential (${scopeDate}) does not match the date in X-Amz-Date (${amzDate}).`,
    );
  }
  return { accessKeyId, scopeDate };
}

/** Constant-time comparison of a hex signature with the expected HMAC. */
export function signatureMatches(provided: string, expected: Buffer): boolean {
  const bytes = /^[0-9a-f]{64}$/i.test(provided) ? Buffer.from(provided, 'hex') : undefined;
  return bytes !== undefined && timingSafeEqual(bytes, expected);
}

/** RFC 3986 encoding as SigV4 canonicalises it: everything but A-Z a-z 0-9 - . _ ~ percent-encoded. */
function strictEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

function decodeLoosely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function amzDateToMs(amzDate: string): number {
  return Date.parse(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
}

interface Authorization {
  credential: string;
  signedHeaders: string[];
  signature: string;
  amzDate: string;
  payloadHash: string;
  presigned: boolean;
}

/** Reads the header (Authorization) or query (X-Amz-*) form of SigV4; undefined when unsigned. */
function authorizationOf(req: IncomingMessage, query: URLSearchParams): Authorization | undefined {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const match = new RegExp(`^${SIGV4_ALGORITHM} Credential=([^,\\s]+),\\s*SignedHeaders=([^,\\s]+),\\s*Signature=([0-9a-fA-F]+)$`).exec(
      header.trim(),
    );
    if (!match)
      throw new S3ErrorResponse(
        400,
        'AuthorizationHeaderMalformed',
        `The authorization header is malformed; only ${SIGV4_ALGORITHM} is supported.`,
      );
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const payloadHash = req.headers['x-amz-content-sha256'];
    if (typeof payloadHash !== 'string')
      throw new S3ErrorResponse(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
    return { credential: match[1]!, signedHeaders: match[2]!.split(';'), signature: match[3]!, amzDate, payloadHash, presigned: false };
  }
  if (!query.has('X-Amz-Signature')) return undefined;
  if (query.get('X-Amz-Algorithm') !== SIGV4_ALGORITHM) {
    throw new S3ErrorResponse(400, 'AuthorizationQueryParametersError', `X-Amz-Algorithm only supports "${SIGV4_ALGORITHM}"`);
  }
  const expires = Number(query.get('X-Amz-Expires'));
  if (!Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGNED_SECONDS) {
    throw new S3ErrorResponse(400, 'AuthorizationQueryParametersError', 'X-Amz-Expires must be a number of seconds from 1 to 604800.');
  }
  const amzDate = query.get('X-Amz-Date') ?? '';
  if (Date.now() > amzDateToMs(amzDate) + expires * 1000) throw new S3ErrorResponse(403, 'AccessDenied', 'Request has expired');
  return {
    credential: query.get('X-Amz-Credential') ?? '',
    signedHeaders: (query.get('X-Amz-SignedHeaders') ?? '').split(';'),
    signature: query.get('X-Amz-Signature') ?? '',
    amzDate,
    payloadHash: String(req.headers['x-amz-content-sha256'] ?? 'UNSIGNED-PAYLOAD'),
    presigned: true,
  };
}

/**
 * Verifies a REST request's SigV4 signature, in the Authorization header or presigned in the query,
 * over the method, path, query and every signed header as the client sent them (Host included), so
 * a presigned PUT is held to its signed Content-Type, Content-Length and metadata. Unsigned requests
 * get S3's 403 AccessDenied for a private bucket. The payload is covered by the hash the client
 * declared (x-amz-content-sha256); the body itself is not rehashed.
 */
export function verifyRequestSignature(identity: SigningIdentity, req: IncomingMessage): { accessKeyId: string } {
  const rawUrl = req.url ?? '/';
  const queryStart = rawUrl.indexOf('?');
  const rawPath = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
  const rawQuery = queryStart === -1 ? '' : rawUrl.slice(queryStart + 1);
  const pairs =
    rawQuery === ''
      ? []
      : rawQuery.split('&').map((pair): [string, string] => {
          const equals = pair.indexOf('=');
          return equals === -1 ? [decodeLoosely(pair), ''] : [decodeLoosely(pair.slice(0, equals)), decodeLoosely(pair.slice(equals + 1))];
        });
  const auth = authorizationOf(req, new URLSearchParams(pairs));
  if (auth === undefined) throw new S3ErrorResponse(403, 'AccessDenied', 'Access Denied');
  const { accessKeyId, scopeDate } = checkCredentialScope(identity, auth.credential, auth.amzDate);
  if (!auth.presigned && Math.abs(Date.now() - amzDateToMs(auth.amzDate)) > MAX_CLOCK_SKEW_MS) {
    throw new S3ErrorResponse(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  }

  const canonicalPath = rawPath
    .split('/')
    .map((segment) => strictEncode(decodeLoosely(segment)))
    .join('/');
  const canonicalQuery = pairs
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [strictEncode(name), strictEncode(value)])
    .sort(([a, x], [b, y]) => (a! < b! ? -1 : a! > b! ? 1 : x! < y! ? -1 : x! > y! ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const values = new Map<string, string[]>();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    values.set(name, [...(values.get(name) ?? []), req.rawHeaders[i + 1]!.trim().replace(/\s+/g, ' ')]);
  }
  const missing = auth.signedHeaders.find((name) => !values.has(name));
  const canonicalHeaders = auth.signedHeaders.map((name) => `${name}:${(values.get(name) ?? []).join(',')}\n`).join('');
  const canonicalRequest = [
    req.method ?? 'GET',
    canonicalPath,
    canonicalQuery,
    canonicalHeaders,
    auth.signedHeaders.join(';'),
    auth.payloadHash,
  ].join('\n');
  const stringToSign = [
    SIGV4_ALGORITHM,
    auth.amzDate,
    auth.credential.split('/').slice(1).join('/'),
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const expected = createHmac('sha256', signingKey(identity.credentials.secretAccessKey, scopeDate, identity.region))
    .update(stringToSign)
    .digest();
  if (missing !== undefined || !auth.signedHeaders.includes('host') || !signatureMatches(auth.signature, expected)) {
    throw new S3ErrorResponse(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.' +
        (missing !== undefined ? ` The signed header ${missing} was not sent.` : ''),
      { AWSAccessKeyId: accessKeyId, StringToSign: stringToSign, CanonicalRequest: canonicalRequest },
    );
  }
  return { accessKeyId };
}
