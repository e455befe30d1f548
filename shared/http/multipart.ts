/**
 * A small, dependency-free `multipart/form-data` parser (RFC 7578 / RFC 2046).
 *
 * It works on a fully buffered body because both of its callers (the local S3
 * POST front and the `POST /markups/file` handler behind API Gateway) already
 * receive the whole body at once; a streaming parser would only add complexity.
 * It is pure: no I/O, no globals, so it can be unit tested byte for byte.
 */

/** One part of a `multipart/form-data` body. */
export interface MultipartPart {
  /** The `name` parameter of the part's `Content-Disposition`. */
  name: string;
  /** Present only for file parts, so callers can tell a file from a field with the same name. */
  filename?: string;
  /** The part's own `Content-Type` header, when the sender gave one. */
  contentType?: string;
  /** Raw bytes, never decoded, so binary files survive untouched. */
  data: Buffer;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * Splits a `multipart/form-data` body into its parts, in the order they were sent.
 *
 * Order matters to callers (S3 ignores every field after `file`), which is why
 * this returns a list rather than a map.
 *
 * @throws Error when the content type carries no boundary, when the body does not
 *   start with a delimiter, when a part is malformed, or when the closing
 *   delimiter is missing (a truncated upload must never be mistaken for a complete one).
 */
export function parseMultipart(body: Buffer, contentType: string): MultipartPart[] {
  const boundary = boundaryOf(contentType);
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  const partSeparator = Buffer.concat([CRLF, delimiter]);

  let cursor = firstDelimiter(body, delimiter, partSeparator);
  const parts: MultipartPart[] = [];

  for (;;) {
    cursor += delimiter.length;
    if (body[cursor] === 0x2d && body[cursor + 1] === 0x2d) return parts;
    cursor = skipLinearWhitespace(body, cursor);
    if (!startsWithAt(body, CRLF, cursor)) {
      throw new Error('Malformed multipart body: expected CRLF after boundary delimiter');
    }
    cursor += CRLF.length;

    const next = body.indexOf(partSeparator, cursor);
    if (next === -1) {
      throw new Error('Malformed multipart body: no closing boundary delimiter');
    }
    parts.push(parsePart(body.subarray(cursor, next)));
    cursor = next + CRLF.length;
  }
}

/** Reads the boundary parameter, quoted or not, because browsers and curl differ. */
function boundaryOf(contentType: string): string {
  const [mediaType = '', ...params] = splitHeaderParams(contentType);
  if (!/^multipart\/form-data$/i.test(mediaType.trim())) {
    throw new Error(`Malformed multipart body: content type is not multipart/form-data: ${contentType}`);
  }
  const boundary = paramsToMap(params).get('boundary');
  if (boundary === undefined || boundary.length === 0) {
    throw new Error('Malformed multipart body: content type has no boundary parameter');
  }
  return boundary;
}

/** The first delimiter may follow a preamble, which RFC 2046 says to ignore. */
function firstDelimiter(body: Buffer, delimiter: Buffer, partSeparator: Buffer): number {
  if (startsWithAt(body, delimiter, 0)) return 0;
  const index = body.indexOf(partSeparator);
  if (index === -1) {
    throw new Error('Malformed multipart body: boundary delimiter not found');
  }
  return index + CRLF.length;
}

function parsePart(raw: Buffer): MultipartPart {
  let headerBlock: string;
  let data: Buffer;
  if (startsWithAt(raw, CRLF, 0)) {
    headerBlock = '';
    data = raw.subarray(CRLF.length);
  } else {
    const end = raw.indexOf(HEADER_END);
    if (end === -1) {
      throw new Error('Malformed multipart body: part headers are not terminated by an empty line');
    }
    headerBlock = raw.subarray(0, end).toString('utf8');
    data = raw.subarray(end + HEADER_END.length);
  }

  const headers = new Map<string, string>();
  for (const line of headerBlock === '' ? [] : headerBlock.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`Malformed multipart body: invalid part header line: ${line}`);
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }

  const disposition = headers.get('content-disposition');
  if (disposition === undefined) {
    throw new Error('Malformed multipart body: part has no Content-Disposition header');
  }
  const [dispositionType = '', ...params] = splitHeaderParams(disposition);
  if (dispositionType.trim().toLowerCase() !== 'form-data') {
    throw new Error(`Malformed multipart body: Content-Disposition is not form-data: ${disposition}`);
  }
  const dispositionParams = paramsToMap(params);
  const name = dispositionParams.get('name');
  if (name === undefined) {
    throw new Error('Malformed multipart body: part has no name in its Content-Disposition');
  }

  const part: MultipartPart = { name, data };
  const filename = extendedFilename(dispositionParams.get('filename*')) ?? dispositionParams.get('filename');
  if (filename !== undefined) part.filename = filename;
  const partType = headers.get('content-type');
  if (partType !== undefined && partType !== '') part.contentType = partType;
  return part;
}

/** RFC 5987 `filename*=UTF-8''...` wins over `filename` because it is the unambiguous encoding. */
function extendedFilename(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const match = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(value);
  if (match === null) return undefined;
  const [, charset = '', encoded = ''] = match;
  const encoding = /^utf-8$/i.test(charset) ? 'utf8' : /^iso-8859-1$/i.test(charset) ? 'latin1' : undefined;
  if (encoding === undefined) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const hex = encoded.slice(i + 1, i + 3);
    if (encoded[i] === '%' && /^[0-9a-f]{2}$/i.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(encoded.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(bytes).toString(encoding);
}

/**
 * Splits `type; a=b; c="d;e"` on semicolons outside quotes, since quoted
 * filenames may legitimately contain semicolons.
 */
function splitHeaderParams(value: string): string[] {
  const pieces: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i] as string;
    if (quoted && ch === '\\' && i + 1 < value.length) {
      current += ch + (value[i + 1] as string);
      i++;
    } else if (ch === '"') {
      quoted = !quoted;
      current += ch;
    } else if (ch === ';' && !quoted) {
      pieces.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  pieces.push(current);
  return pieces;
}

/** Parameter names are case-insensitive (RFC 2045), values keep their case. */
function paramsToMap(params: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    const key = param.slice(0, eq).trim().toLowerCase();
    const value = unquote(param.slice(eq + 1).trim());
    if (!map.has(key)) map.set(key, value);
  }
  return map;
}

/**
 * Only `\"` and `\\` are treated as escapes: old browsers send Windows paths
 * with bare backslashes, which must survive as-is.
 */
function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(["\\])/g, '$1');
}

function skipLinearWhitespace(body: Buffer, index: number): number {
  let i = index;
  while (body[i] === 0x20 || body[i] === 0x09) i++;
  return i;
}

function startsWithAt(body: Buffer, needle: Buffer, index: number): boolean {
  return body.length - index >= needle.length && body.compare(needle, 0, needle.length, index, index + needle.length) === 0;
}
