import { describe, expect, it } from 'vitest';
import { redact } from '../../shared/logger.js';
import { seededRandom } from '../support/fuzz.js';

const apiKey = `rbk_${'a'.repeat(32)}_${'S'.repeat(43)}`;
const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEiLCJhdWQiOiJ4In0.c2lnbmF0dXJlLXBhcnQ';
const signingKey = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw==';

describe('log redaction: credentials never reach a log line', () => {
  it('replaces credential-named fields at any depth, whatever their value', () => {
    expect(
      redact({
        authorization: `Bearer ${apiKey}`,
        headers: { Authorization: 'Basic dXNlcjpwYXNz', cookie: 'session=1', 'x-api-key': 'abc' },
        registration: { url: 'https://example.com/hook', signingKey },
        exchangeToken: jwt,
        clientSecret: 'hunter2',
        nested: [{ password: 'p' }, { privateKey: '-----BEGIN PRIVATE KEY-----' }],
      }),
    ).toEqual({
      authorization: '[redacted]',
      headers: { Authorization: '[redacted]', cookie: '[redacted]', 'x-api-key': '[redacted]' },
      registration: { url: 'https://example.com/hook', signingKey: '[redacted]' },
      exchangeToken: '[redacted]',
      clientSecret: '[redacted]',
      nested: [{ password: '[redacted]' }, { privateKey: '[redacted]' }],
    });
  });

  it('removes credentials from free text and error messages, keeping what identifies them', () => {
    const error = new Error(`request with Bearer ${jwt} and key ${apiKey} failed; receiver secret ${signingKey}`);
    const redacted = redact({ message: `Authorization: Bearer ${apiKey}`, error }) as {
      message: string;
      error: { message: string; stack: string };
    };

    expect(redacted.message).toBe('Authorization: Bearer [redacted]');
    expect(redacted.error.message).toBe(
      `request with Bearer [redacted] and key rbk_${'a'.repeat(32)}_[redacted] failed; receiver secret whsec_[redacted]`,
    );
    expect(redacted.error.stack).not.toContain('S'.repeat(43));
    expect(JSON.stringify(redact(`token ${jwt} in text`))).not.toContain(jwt.split('.')[1]);
  });

  it('leaves ordinary fields alone', () => {
    const fields = {
      requestId: 'r-1',
      routeKey: 'GET /api/v2/workspace',
      status: 200,
      durationMs: 12,
      key: 'markups/m1/page-1.png',
      hasMore: true,
    };
    expect(redact(fields)).toEqual(fields);
  });
});

const b64url = (text: string) => Buffer.from(text).toString('base64url');
/** A JWT whose JSON header has a space after the brace: it encodes as `eyA…`, not `eyJ…`. */
const spacedJwt = `${b64url('{ "alg": "ES256", "typ": "JWT" }')}.${b64url('{"sub":"user-1","aud":"x"}')}.c2lnbmF0dXJlLXBhcnQ`;
const presignedUrl =
  'https://bucket.s3.eu-west-1.amazonaws.com/markups/m1/page-1.png?X-Amz-Algorithm=AWS4-HMAC-SHA256' +
  '&X-Amz-Credential=ASIAEXAMPLEKEYID1234%2F20260101%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600' +
  '&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN%2Bmore%3D&X-Amz-Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef&X-Amz-SignedHeaders=host';

describe('log redaction: no gap lets a credential through (issue 28, item 9)', () => {
  it('redacts values nested deeper than any limit, replacing what it does not walk with a marker', () => {
    let nested: unknown = { password: 'hunter2', note: `Bearer ${apiKey}`, list: [jwt] };
    for (let level = 0; level < 40; level++) nested = { level, child: nested };

    const line = JSON.stringify(redact(nested));

    expect(line).not.toContain('hunter2');
    expect(line).not.toContain('S'.repeat(43));
    expect(line).not.toContain(jwt.split('.')[1]);
    expect(line).toContain('[depth limit]');
  });

  it('redacts the signature, session token and credential of presigned URLs, keeping the rest', () => {
    const redacted = redact({
      url: presignedUrl,
      text: `fetch ${presignedUrl} failed`,
      fields: { 'X-Amz-Signature': 'abc123', 'x-amz-credential': 'ASIAEXAMPLE/20260101' },
    });
    const line = JSON.stringify(redacted);

    for (const secret of [
      '0123456789abcdef0123456789abcdef',
      'IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN',
      'ASIAEXAMPLEKEYID1234',
      'abc123',
      'ASIAEXAMPLE',
    ])
      expect(line).not.toContain(secret);
    expect((redacted as { url: string }).url).toBe(
      'https://bucket.s3.eu-west-1.amazonaws.com/markups/m1/page-1.png?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=[redacted]' +
        '&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600&X-Amz-Security-Token=[redacted]&X-Amz-Signature=[redacted]&X-Amz-SignedHeaders=host',
    );
  });

  it('redacts JWTs whatever the white space of their JSON header', () => {
    const tabbed = `${b64url('{\n\t"alg": "HS256"\n}')}.${b64url('{"sub":"user-2"}')}.c2lnbmF0dXJlLXR3bw`;
    expect(spacedJwt.startsWith('eyA')).toBe(true);

    const line = JSON.stringify(redact({ note: `exchanged ${spacedJwt} and ${tabbed}` }));

    expect(line).not.toContain(spacedJwt.split('.')[1]);
    expect(line).not.toContain(tabbed.split('.')[1]);
    expect(line).not.toContain('c2lnbmF0dXJl');
  });

  it('redacts API key secrets whose key id is written in upper-case hex', () => {
    const upper = `rbk_${'AB12'.repeat(8)}_${'T'.repeat(43)}`;

    expect(redact(`key ${upper} refused`)).toBe(`key rbk_${'AB12'.repeat(8)}_[redacted] refused`);
    expect(JSON.stringify(redact({ note: `RBK_${'ab'.repeat(16)}_${'U'.repeat(43)}` }))).not.toContain('U'.repeat(43));
  });

  it('logs Maps and Sets as their redacted contents instead of dropping them', () => {
    const headers = new Map<string, unknown>([
      ['authorization', `Bearer ${apiKey}`],
      ['content-type', 'image/png'],
      ['nested', new Map([['password', 'hunter2']])],
    ]);

    expect(redact({ headers, tags: new Set(['a', `token ${jwt}`]) })).toEqual({
      headers: { authorization: '[redacted]', 'content-type': 'image/png', nested: { password: '[redacted]' } },
      tags: ['a', 'token [redacted]'],
    });
  });

  it('keeps its work bounded: cycles, huge arrays and wide objects end in markers', () => {
    const cyclic: Record<string, unknown> = { name: 'root', password: 'hunter2' };
    cyclic.self = cyclic;
    const huge = Array.from({ length: 200_000 }, (_, index) => ({ index, token: 'x' }));
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`k${index}`, `Bearer secret${index}`]));

    const started = performance.now();
    const line = JSON.stringify(redact({ cyclic, huge, wide }));
    const elapsedMs = performance.now() - started;

    expect(line).toContain('[circular]');
    expect(line).not.toContain('hunter2');
    expect(line).not.toMatch(/secret\d/);
    expect(line.length).toBeLessThan(1_000_000);
    expect(elapsedMs).toBeLessThan(2_000);
  });

  it('turns values JSON cannot write into text, and survives getters that throw', () => {
    const hostile = Object.defineProperty({ ok: 1 }, 'boom', {
      enumerable: true,
      get: () => {
        throw new Error('no');
      },
    });
    const redacted = redact({ count: 12n, at: new Date('2026-01-01T00:00:00Z'), url: new URL(presignedUrl), hostile }) as Record<
      string,
      unknown
    >;

    expect(() => JSON.stringify(redacted)).not.toThrow();
    expect(redacted.count).toBe('12');
    expect(redacted.at).toBe('2026-01-01T00:00:00.000Z');
    expect(redacted.url).toContain('X-Amz-Signature=[redacted]');
    expect(redacted.hostile).toEqual({ ok: 1, boom: '[unreadable]' });
  });

  it('redacts the cause of an error', () => {
    const error = Object.assign(new Error('outer', { cause: new Error(`inner Bearer ${apiKey}`) }), {
      code: 'E1',
      response: { headers: { authorization: 'x' } },
    });

    const line = JSON.stringify(redact({ error }));

    expect(line).not.toContain('S'.repeat(43));
    expect(line).toContain('inner Bearer [redacted]');
    expect(line).toContain('"code":"E1"');
  });
});

describe('log redaction: property over generated nested structures', () => {
  it('lets no secret survive, at any depth, in any container', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = seededRandom(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
      const secrets: string[] = [];
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
      /** A fresh secret: unique text that must never reach the line. */
      const secret = (length = 43) => {
        let text = `Q${secrets.length}x`;
        while (text.length < length) text += alphabet[Math.floor(next() * alphabet.length)];
        secrets.push(text);
        return text;
      };
      const hex = () => Array.from({ length: 32 }, () => pick('0123456789abcdefABCDEF'.split(''))).join('');
      const carriers: (() => string)[] = [
        () => `Bearer ${secret()}`,
        () => `basic ${secret()}`,
        () => `${pick(['eyJ', 'eyA', 'ewo', 'ewk', 'ew0'])}${secret(20)}.${secret(30)}.${secret(20)}`,
        () => `${pick(['rbk_', 'RBK_'])}${hex()}_${secret()}`,
        () => `whsec_${secret(44)}`,
        () =>
          `https://b.s3.amazonaws.com/k?${pick(['X-Amz-Signature', 'x-amz-security-token', 'X-Amz-Credential'])}=${secret()}&X-Amz-Date=1`,
      ];
      const secretKeys = [
        'password',
        'Authorization',
        'x-api-key',
        'sessionToken',
        'clientSecret',
        'signingKey',
        'X-Amz-Signature',
        'cookie',
      ];
      const text = () => (next() < 0.5 ? `plain ${Math.floor(next() * 1e6)}` : `before ${pick(carriers)()} after`);
      /** A spine `depth` containers deep, with shallow branches beside it (so the size stays small). */
      const value = (depth: number): unknown => {
        if (depth <= 0) return text();
        const children = 1 + Math.floor(next() * 3);
        const entries = Array.from(
          { length: children },
          (_, index) =>
            [
              next() < 0.3 ? pick(secretKeys) : `f${index}`,
              value(index === 0 ? depth - 1 : Math.min(depth - 1, Math.floor(next() * 3))),
            ] as const,
        );
        const kind = pick(['object', 'array', 'map', 'set', 'error'] as const);
        // a bare secret is a secret only under a secret-named key: give one to containers that keep keys
        if (kind !== 'array' && kind !== 'set')
          for (const [key] of entries.filter(([key]) => secretKeys.includes(key))) entries.push([key, secret()]);
        switch (kind) {
          case 'object':
            return Object.fromEntries(entries);
          case 'array':
            return entries.map(([, item]) => item);
          case 'map':
            return new Map(entries);
          case 'set':
            return new Set(entries.map(([, item]) => item));
          case 'error':
            return Object.assign(new Error(text(), { cause: entries[0]?.[1] }), { details: Object.fromEntries(entries) });
        }
      };
      const structure = { [pick(secretKeys)]: secret(), deep: value(4 + Math.floor(next() * 30)) };

      const line = JSON.stringify(redact(structure));

      for (const leaked of secrets) expect(line, `seed ${seed}`).not.toContain(leaked);
    }
  });
});
