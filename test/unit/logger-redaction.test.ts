import { describe, expect, it } from 'vitest';
import { redact } from '../../shared/logger.js';

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
    const redacted = redact({ message: `Authorization: Bearer ${apiKey}`, error }) as { message: string; error: { message: string; stack: string } };

    expect(redacted.message).toBe('Authorization: Bearer [redacted]');
    expect(redacted.error.message).toBe(`request with Bearer [redacted] and key rbk_${'a'.repeat(32)}_[redacted] failed; receiver secret whsec_[redacted]`);
    expect(redacted.error.stack).not.toContain('S'.repeat(43));
    expect(JSON.stringify(redact(`token ${jwt} in text`))).not.toContain(jwt.split('.')[1]);
  });

  it('leaves ordinary fields alone', () => {
    const fields = { requestId: 'r-1', routeKey: 'GET /api/v2/workspace', status: 200, durationMs: 12, key: 'markups/m1/page-1.png', hasMore: true };
    expect(redact(fields)).toEqual(fields);
  });
});
