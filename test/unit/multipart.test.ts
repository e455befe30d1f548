import { describe, expect, it } from 'vitest';
import { parseMultipart } from '../../shared/http/multipart.js';

const CRLF = '\r\n';

/** Builds a body by hand so each test controls every byte on the wire. */
function body(boundary: string, parts: Array<{ headers: string[]; data: string | Buffer }>, closing = `--${boundary}--${CRLF}`): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}${CRLF}${part.headers.join(CRLF)}${CRLF}${CRLF}`, 'utf8'));
    chunks.push(typeof part.data === 'string' ? Buffer.from(part.data, 'utf8') : part.data);
    chunks.push(Buffer.from(CRLF));
  }
  chunks.push(Buffer.from(closing));
  return Buffer.concat(chunks);
}

const field = (name: string, value: string) => ({ headers: [`Content-Disposition: form-data; name="${name}"`], data: value });

describe('parseMultipart', () => {
  it('parses text fields in order', () => {
    const parts = parseMultipart(
      body('XyZ', [field('key', 'uploads/a.png'), field('Content-Type', 'image/png')]),
      'multipart/form-data; boundary=XyZ',
    );

    expect(parts.map((part) => [part.name, part.data.toString('utf8')])).toEqual([
      ['key', 'uploads/a.png'],
      ['Content-Type', 'image/png'],
    ]);
    expect(parts[0]?.filename).toBeUndefined();
    expect(parts[0]?.contentType).toBeUndefined();
  });

  it('keeps binary file data byte for byte, including CRLF and dashes', () => {
    const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from('\r\n--Xy\r\n--xyz\r\n--')]);
    const parts = parseMultipart(
      body('XyZ', [
        {
          headers: ['Content-Disposition: form-data; name="file"; filename="pic.bin"', 'Content-Type: application/octet-stream'],
          data: bytes,
        },
      ]),
      'multipart/form-data; boundary=XyZ',
    );

    expect(parts).toHaveLength(1);
    expect(parts[0]?.name).toBe('file');
    expect(parts[0]?.filename).toBe('pic.bin');
    expect(parts[0]?.contentType).toBe('application/octet-stream');
    expect(Buffer.compare(parts[0]?.data ?? Buffer.alloc(0), bytes)).toBe(0);
  });

  it('accepts a quoted boundary with characters that need quoting', () => {
    const boundary = 'a:b=c (d)';
    const parts = parseMultipart(body(boundary, [field('x', '1')]), `multipart/form-data; charset=utf-8; BOUNDARY="${boundary}"`);

    expect(parts.map((part) => part.data.toString())).toEqual(['1']);
  });

  it('returns fields after the file part, in order, so callers can decide to ignore them', () => {
    const parts = parseMultipart(
      body('b', [
        field('key', 'k'),
        { headers: ['Content-Disposition: form-data; name="file"; filename="f.txt"'], data: 'hello' },
        field('after', 'x'),
      ]),
      'multipart/form-data; boundary=b',
    );

    expect(parts.map((part) => part.name)).toEqual(['key', 'file', 'after']);
    expect(parts[2]?.data.toString()).toBe('x');
  });

  it('keeps empty values and empty file names', () => {
    const parts = parseMultipart(
      body('b', [field('empty', ''), { headers: ['Content-Disposition: form-data; name="file"; filename=""'], data: '' }]),
      'multipart/form-data; boundary=b',
    );

    expect(parts[0]?.data.length).toBe(0);
    expect(parts[1]?.filename).toBe('');
    expect(parts[1]?.data.length).toBe(0);
  });

  it('decodes UTF-8 names, escaped quotes, semicolons and RFC 5987 filename*', () => {
    const parts = parseMultipart(
      body('b', [
        { headers: ['Content-Disposition: form-data; name="file"; filename="Résumé; \\"final\\".pdf"'], data: 'a' },
        {
          headers: [`Content-Disposition: form-data; name="other"; filename="fallback.txt"; filename*=UTF-8''na%C3%AFve%20file.txt`],
          data: 'b',
        },
      ]),
      'multipart/form-data; boundary=b',
    );

    expect(parts[0]?.filename).toBe('Résumé; "final".pdf');
    expect(parts[1]?.filename).toBe('naïve file.txt');
  });

  it('ignores a preamble and an epilogue', () => {
    const raw = Buffer.concat([Buffer.from(`this is a preamble${CRLF}`), body('b', [field('a', '1')]), Buffer.from('epilogue')]);

    expect(parseMultipart(raw, 'multipart/form-data; boundary=b').map((part) => part.name)).toEqual(['a']);
  });

  it('parses what the platform FormData serializer produces', async () => {
    const form = new FormData();
    form.append('key', 'uploads/${filename}');
    form.append('file', new Blob([new Uint8Array([0, 13, 10, 255])], { type: 'image/png' }), 'a b.png');
    const request = new Request('http://localhost/', { method: 'POST', body: form });
    const raw = Buffer.from(await request.arrayBuffer());

    const parts = parseMultipart(raw, request.headers.get('content-type') ?? '');

    expect(parts.map((part) => part.name)).toEqual(['key', 'file']);
    expect(parts[0]?.data.toString()).toBe('uploads/${filename}');
    expect(parts[1]?.filename).toBe('a b.png');
    expect(parts[1]?.contentType).toBe('image/png');
    expect([...(parts[1]?.data ?? [])]).toEqual([0, 13, 10, 255]);
  });

  it('returns no parts for a body that is only a closing delimiter', () => {
    expect(parseMultipart(Buffer.from('--b--\r\n'), 'multipart/form-data; boundary=b')).toEqual([]);
  });

  it('throws when the content type has no boundary', () => {
    expect(() => parseMultipart(body('b', [field('a', '1')]), 'multipart/form-data')).toThrow(/no boundary/);
    expect(() => parseMultipart(body('b', [field('a', '1')]), 'multipart/form-data; boundary=""')).toThrow(/no boundary/);
  });

  it('throws when the content type is not multipart/form-data', () => {
    expect(() => parseMultipart(Buffer.from('a=1'), 'application/x-www-form-urlencoded')).toThrow(/not multipart\/form-data/);
  });

  it('throws when the closing delimiter is missing', () => {
    const truncated = Buffer.from(`--b${CRLF}Content-Disposition: form-data; name="a"${CRLF}${CRLF}value`);

    expect(() => parseMultipart(truncated, 'multipart/form-data; boundary=b')).toThrow(/no closing boundary delimiter/);
  });

  it('throws when the body ends after a part delimiter without the closing one', () => {
    const raw = body('b', [field('a', '1')], `--b${CRLF}`);

    expect(() => parseMultipart(raw, 'multipart/form-data; boundary=b')).toThrow(/no closing boundary delimiter/);
  });

  it('throws when the boundary never appears', () => {
    expect(() => parseMultipart(Buffer.from('garbage'), 'multipart/form-data; boundary=b')).toThrow(/boundary delimiter not found/);
  });

  it('throws when a part has no Content-Disposition or no name', () => {
    const noDisposition = body('b', [{ headers: ['Content-Type: text/plain'], data: 'x' }]);
    const noName = body('b', [{ headers: ['Content-Disposition: form-data; filename="a.txt"'], data: 'x' }]);

    expect(() => parseMultipart(noDisposition, 'multipart/form-data; boundary=b')).toThrow(/no Content-Disposition/);
    expect(() => parseMultipart(noName, 'multipart/form-data; boundary=b')).toThrow(/no name/);
  });

  it('throws when part headers are not terminated', () => {
    const raw = Buffer.from(`--b${CRLF}Content-Disposition: form-data; name="a"${CRLF}--b--${CRLF}`);

    expect(() => parseMultipart(raw, 'multipart/form-data; boundary=b')).toThrow(/Malformed multipart body/);
  });
});
