/**
 * The browser form POST of the local S3 front, read as S3 reads it: the fields before `file` are
 * buffered (at most 20 KB) and the policy, signature and tagging judged on them alone; only then is
 * the file streamed, counted against the policy's content-length-range as it arrives, into a
 * temporary file. Memory stays bounded whatever the client sends.
 */
import { createHmac } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { parseMultipart, type MultipartPart } from '../../shared/http/multipart.js';
import { S3ErrorResponse } from './s3-errors.js';
import { checkCredentialScope, SIGV4_ALGORITHM, signatureMatches, signingKey, type SigningIdentity } from './s3-sigv4.js';
import { decodePolicy } from './s3-policy.js';

/** S3's limit on the form fields that precede the file. */
const MAX_PRE_DATA_BYTES = 20 * 1024;
/** S3's largest object a single POST may create. */
export const MAX_POST_OBJECT_BYTES = 5 * 1024 * 1024 * 1024;

/** Form fields S3 never requires a policy condition for. */
const UNCHECKED_FIELDS = new Set(['file', 'policy', 'x-amz-signature']);

export interface FormField {
  /** The name as sent, so error messages echo the client's own spelling. */
  name: string;
  value: string;
}

export interface FormHead {
  fields: Map<string, FormField>;
  filename: string | undefined;
  /** The body after the file part's headers: what was already read, then the rest of the request. */
  rest: Buffer;
  source: AsyncIterator<Buffer>;
  boundary: string;
}

const malformed = (detail: string) =>
  new S3ErrorResponse(400, 'MalformedPOSTRequest', `The body of your POST request is not well-formed multipart/form-data. ${detail}`);

/**
 * Reads the request up to the end of the `file` part's headers and parses the fields before it
 * (fields after the file are never read, as S3 ignores them). Refuses more than 20 KB before the
 * file and a form with no file.
 */
export async function readFormHead(source: AsyncIterator<Buffer>, contentType: string): Promise<FormHead> {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)?.slice(1).find(Boolean);
  if (!boundary) throw malformed('The Content-Type has no boundary.');
  const separator = Buffer.from(`\r\n--${boundary}`);
  let buffer = Buffer.alloc(0);
  for (;;) {
    const found = findFilePart(buffer, boundary, separator);
    if (buffer.length > MAX_PRE_DATA_BYTES && (!found || found.dataStart > MAX_PRE_DATA_BYTES)) {
      throw new S3ErrorResponse(
        400,
        'MaxPostPreDataLengthExceededError',
        'Your POST request fields preceding the upload file were too large.',
        {
          MaxPostPreDataLength: String(MAX_PRE_DATA_BYTES),
        },
      );
    }
    if (found) {
      const parse = (bytes: Buffer) => {
        try {
          return parseMultipart(Buffer.concat([bytes, Buffer.from(`--${boundary}--`)]), `multipart/form-data; boundary=${boundary}`);
        } catch (error) {
          throw malformed((error as Error).message);
        }
      };
      const fields = found.fieldsEnd === 0 ? [] : parse(buffer.subarray(0, found.fieldsEnd));
      const [file] = parse(Buffer.concat([buffer.subarray(found.fieldsEnd, found.dataStart), Buffer.from('\r\n')]));
      return { fields: collectFields(fields), filename: file?.filename, rest: buffer.subarray(found.dataStart), source, boundary };
    }
    const next = await source.next();
    if (next.done) {
      throw new S3ErrorResponse(
        400,
        'InvalidArgument',
        'POST requires exactly one file upload per request. The form has no field named file.',
        {
          ArgumentName: 'file',
          ArgumentValue: '0',
        },
      );
    }
    buffer = Buffer.concat([buffer, next.value]);
  }
}

/** Where the `file` part starts and where its data starts, once its headers have arrived. */
function findFilePart(buffer: Buffer, boundary: string, separator: Buffer): { fieldsEnd: number; dataStart: number } | undefined {
  const delimiter = separator.subarray(2);
  let start = buffer.subarray(0, delimiter.length).equals(delimiter) ? 0 : buffer.indexOf(separator) + 2;
  while (start >= 2 || (start === 0 && buffer.length > 0)) {
    const headersEnd = buffer.indexOf('\r\n\r\n', start + delimiter.length);
    if (headersEnd === -1) return undefined;
    const headerBlock = buffer.subarray(start + delimiter.length, headersEnd).toString('utf8');
    if (/^--/.test(headerBlock)) throw new S3ErrorResponse(400, 'InvalidArgument', 'POST requires exactly one file upload per request.');
    if (/content-disposition:[^\r\n]*;\s*name="?file"?(;|\s|\r|$)/i.test(headerBlock))
      return { fieldsEnd: start, dataStart: headersEnd + 4 };
    const next = buffer.indexOf(separator, headersEnd + 4);
    if (next === -1) return undefined;
    start = next + 2;
  }
  return undefined;
}

/**
 * Keeps the first value of each field (names are case-insensitive in S3) and refuses duplicates,
 * so the value checked against the policy is always the value that gets stored.
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

export interface VerifiedPost {
  key: string;
  accessKeyId: string;
  minSize: number;
  maxSize: number;
  tags: { Key: string; Value: string }[] | undefined;
}

/**
 * Verifies a SigV4 POST the way S3 does, from the fields before the file: authenticity of the policy
 * first, then its expiry, then every condition, then that no field escaped the policy, then the
 * tagging document. The file's size is checked while it streams (see receiveFile).
 */
export function verifyPost(
  identity: SigningIdentity,
  bucket: string,
  fields: Map<string, FormField>,
  filename: string | undefined,
): VerifiedPost {
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
  const { accessKeyId, scopeDate } = checkCredentialScope(identity, credential, amzDate);
  const expected = createHmac('sha256', signingKey(identity.credentials.secretAccessKey, scopeDate, identity.region))
    .update(policy, 'utf8')
    .digest();
  if (!signatureMatches(signature, expected)) {
    throw new S3ErrorResponse(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method. ' +
        'X-Amz-Signature must be the SigV4 signature of the Policy field with the key named in X-Amz-Credential.',
      { AWSAccessKeyId: accessKeyId, StringToSign: policy, SignatureProvided: signature },
    );
  }

  const { expiration, conditions } = decodePolicy(policy);
  if (Date.now() > expiration) throw new S3ErrorResponse(403, 'AccessDenied', 'Invalid according to Policy: Policy expired.');

  const covered = new Set<string>();
  let minSize = 0;
  let maxSize = MAX_POST_OBJECT_BYTES;
  for (const condition of conditions) {
    if (condition.kind === 'content-length-range') {
      minSize = Math.max(minSize, condition.min);
      maxSize = Math.min(maxSize, condition.max);
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
    if (!satisfied)
      throw new S3ErrorResponse(403, 'AccessDenied', `Invalid according to Policy: Policy Condition failed: ${condition.label}`);
  }

  const extra = [...fields.entries()]
    .filter(([lower]) => !UNCHECKED_FIELDS.has(lower) && !lower.startsWith('x-ignore-') && !covered.has(lower))
    .map(([, field]) => field.name);
  if (extra.length > 0)
    throw new S3ErrorResponse(403, 'AccessDenied', `Invalid according to Policy: Extra input fields: ${extra.join(', ')}`);

  const rawKey = fields.get('key')?.value;
  if (rawKey === undefined) {
    throw new S3ErrorResponse(
      400,
      'InvalidArgument',
      "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.",
      {
        ArgumentName: 'key',
        ArgumentValue: '',
      },
    );
  }
  const key = rawKey.replaceAll('${filename}', filename ?? '');
  if (key.length === 0)
    throw new S3ErrorResponse(400, 'InvalidArgument', 'User key must have a length greater than 0.', {
      ArgumentName: 'key',
      ArgumentValue: '',
    });
  const tagging = fields.get('tagging')?.value;
  return { key, accessKeyId, minSize, maxSize, tags: tagging === undefined ? undefined : parseTagging(tagging) };
}

/** The `tagging` field: S3's `<Tagging><TagSet><Tag><Key/><Value/></Tag>...</TagSet></Tagging>`. */
export function parseTagging(xml: string): { Key: string; Value: string }[] {
  const document =
    /^\s*(?:<\?xml[^>]*\?>\s*)?<Tagging>\s*<TagSet>((?:\s*<Tag>\s*<Key>[^<]*<\/Key>\s*<Value>[^<]*<\/Value>\s*<\/Tag>)*)\s*<\/TagSet>\s*<\/Tagging>\s*$/.exec(
      xml,
    );
  if (!document) {
    throw new S3ErrorResponse(
      400,
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema',
    );
  }
  const unescape = (text: string) =>
    text
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&');
  return [...document[1]!.matchAll(/<Key>([^<]*)<\/Key>\s*<Value>([^<]*)<\/Value>/g)].map(([, key, value]) => ({
    Key: unescape(key!),
    Value: unescape(value!),
  }));
}

/**
 * Streams the file part into `path`, stopping at its closing delimiter, and refuses it with
 * EntityTooLarge the moment it passes `maxSize` (not after reading it), EntityTooSmall at its end.
 * Only one delimiter's length is held back between chunks.
 */
export async function receiveFile(head: FormHead, path: string, limits: { minSize: number; maxSize: number }): Promise<number> {
  const separator = Buffer.from(`\r\n--${head.boundary}`);
  const out = createWriteStream(path);
  let size = 0;
  const write = async (bytes: Buffer) => {
    size += bytes.length;
    if (size > limits.maxSize) {
      throw new S3ErrorResponse(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', {
        ProposedSize: String(size),
        MaxSizeAllowed: String(limits.maxSize),
      });
    }
    if (!out.write(bytes)) await once(out, 'drain');
  };
  try {
    let pending = head.rest;
    for (;;) {
      const end = pending.indexOf(separator);
      if (end !== -1) {
        await write(pending.subarray(0, end));
        break;
      }
      const keep = Math.min(pending.length, separator.length - 1);
      await write(pending.subarray(0, pending.length - keep));
      const next = await head.source.next();
      if (next.done) throw malformed('The file part has no closing boundary.');
      pending = Buffer.concat([pending.subarray(pending.length - keep), next.value]);
    }
  } finally {
    await new Promise<void>((resolve) => {
      out.once('close', resolve);
      out.end();
    });
  }
  if (size < limits.minSize) {
    throw new S3ErrorResponse(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed size', {
      ProposedSize: String(size),
      MinSizeAllowed: String(limits.minSize),
    });
  }
  return size;
}

/**
 * Non-ASCII metadata cannot travel in HTTP headers; S3 stores such values RFC 2047-encoded, so the
 * front does the same instead of failing the upload.
 */
export function metadataOf(fields: Map<string, FormField>): Record<string, string> | undefined {
  const metadata: Record<string, string> = {};
  for (const [lower, field] of fields) {
    if (!lower.startsWith('x-amz-meta-')) continue;
    metadata[lower.slice('x-amz-meta-'.length)] = /^[\x20-\x7e]*$/.test(field.value)
      ? field.value
      : `=?UTF-8?B?${Buffer.from(field.value, 'utf8').toString('base64')}?=`;
  }
  return Object.keys(metadata).length > 0 ? metadata : undefined;
}
