import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../shared/errors.js';
import { idempotencyScope, readIdempotencyKey, requestFingerprint } from '../../shared/http/idempotency.js';

type FingerprintInput = Parameters<typeof requestFingerprint>[0];

const makeRequest = (overrides: Partial<FingerprintInput> & { method?: string } = {}): FingerprintInput => ({
  rawPath: '/api/v2/markups/url',
  rawQueryString: '',
  body: '{"url":"https://example.com/"}',
  isBase64Encoded: false,
  requestContext: { http: { method: overrides.method ?? 'POST' } } as FingerprintInput['requestContext'],
  ...overrides,
});

describe('Idempotency-Key header (1-255 printable ASCII characters)', () => {
  it('answers the key as sent, and undefined without the header', () => {
    expect(readIdempotencyKey({ 'idempotency-key': ' a-Key_1 ~' })).toBe(' a-Key_1 ~');
    expect(readIdempotencyKey({ 'idempotency-key': 'k'.repeat(255) })).toBe('k'.repeat(255));
    expect(readIdempotencyKey({})).toBeUndefined();
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a tab', 'a\tb'],
    ['a character beyond ASCII', 'clé'],
    ['a control character', 'a\u0001b'],
  ])('refuses a key with %s as a validation error on /headers/idempotency-key', (_label, value) => {
    const read = () => readIdempotencyKey({ 'idempotency-key': value });

    expect(read).toThrow(ValidationError);
    try {
      read();
    } catch (error) {
      expect((error as ValidationError).errors).toEqual([{ pointer: '/headers/idempotency-key', detail: expect.any(String) }]);
    }
  });
});

describe('Request fingerprint (method, path, query string, body bytes)', () => {
  it('is the same for the same bytes whichever way API Gateway carried them', () => {
    const body = '--b\r\nContent-Disposition: form-data; name="file"\r\n\r\n\u00ff\u0000\r\n--b--\r\n';
    const bytes = Buffer.from(body, 'utf8');

    expect(requestFingerprint(makeRequest({ body, isBase64Encoded: false }))).toBe(
      requestFingerprint(makeRequest({ body: bytes.toString('base64'), isBase64Encoded: true })),
    );
  });

  it('differs when the body, the path, the query string or the method differs', () => {
    const base = requestFingerprint(makeRequest());

    expect(requestFingerprint(makeRequest({ body: '{"url":"https://example.com/other"}' }))).not.toBe(base);
    expect(requestFingerprint(makeRequest({ body: '{ "url":"https://example.com/"}' }))).not.toBe(base);
    expect(requestFingerprint(makeRequest({ rawPath: '/api/v2/items' }))).not.toBe(base);
    expect(requestFingerprint(makeRequest({ rawQueryString: 'workspaceId=1' }))).not.toBe(base);
    expect(requestFingerprint(makeRequest({ method: 'PUT' }))).not.toBe(base);
    expect(requestFingerprint(makeRequest({ body: undefined }))).not.toBe(base);
  });
});

describe('Idempotency scope (keys belong to a credential)', () => {
  it('scopes API keys by key id and exchange tokens by their end user', () => {
    expect(
      idempotencyScope({ kind: 'apiKey', scope: 'organization', keyId: 'k1', organizationId: 'o', userId: 'u', actsAsMember: false }),
    ).toBe('KEY#k1');
    expect(
      idempotencyScope({
        kind: 'endUser',
        scope: 'workspace',
        organizationId: 'o',
        workspaceId: 'w',
        userId: 'u1',
        externalId: 'e',
        installationId: 'i',
        markupRole: 'project:contributor',
        actsAsMember: false,
      }),
    ).toBe('ENDUSER#u1');
  });
});
