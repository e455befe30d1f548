import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { classifyAttempt, MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from '../../shared/domain/webhooks/retries.js';
import { signWebhook } from '../../shared/domain/webhooks/signature.js';
import { newWebhookSigningKey } from '../../shared/domain/webhooks/registrations.js';

describe('signWebhook', () => {
  it('produces headers the standardwebhooks package verifies, and only with the key that signed', () => {
    const key = newWebhookSigningKey();
    const body = JSON.stringify({ id: 'e1', type: 'webhook.test', data: { text: 'é ✓' } });
    const headers = signWebhook({ id: 'e1', timestampSeconds: Date.now() / 1000, body, signingKey: key });
    expect(headers['webhook-id']).toBe('e1');
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(key).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSigningKey()).verify(body, { ...headers })).toThrow();
    expect(() => new Webhook(key).verify(`${body} `, { ...headers })).toThrow();
  });

  it('puts whole seconds in webhook-timestamp', () => {
    const headers = signWebhook({ id: 'e', timestampSeconds: 1_700_000_000.987, body: '{}', signingKey: newWebhookSigningKey() });
    expect(headers['webhook-timestamp']).toBe('1700000000');
  });
});

describe('retryDelayMs', () => {
  it('follows the Standard Webhooks schedule within ±20% jitter', () => {
    for (const [index, base] of RETRY_DELAYS_MS.entries()) {
      expect(retryDelayMs(index + 1, () => 0)).toBe(base * 0.8);
      expect(retryDelayMs(index + 1, () => 0.5)).toBe(base);
      expect(retryDelayMs(index + 1, () => 0.999999)).toBeLessThanOrEqual(base * 1.2);
    }
    expect(RETRY_DELAYS_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
  });

  it('puts the first retry 4 to 6 s after the first attempt', () => {
    for (let i = 0; i < 200; i += 1) {
      const delay = retryDelayMs(1)!;
      expect(delay).toBeGreaterThanOrEqual(4_000);
      expect(delay).toBeLessThanOrEqual(6_000);
    }
  });

  it('has no delay after the last attempt', () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(retryDelayMs(MAX_ATTEMPTS)).toBeUndefined();
    expect(retryDelayMs(0)).toBeUndefined();
  });
});

describe('classifyAttempt', () => {
  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [410, 'gone'],
    [500, 'retry'],
    [503, 'retry'],
    [429, 'retry'],
    [301, 'failed'],
    [302, 'failed'],
    [400, 'failed'],
    [401, 'failed'],
    [404, 'failed'],
  ] as const)('classifies %i as %s', (statusCode, outcome) => {
    expect(classifyAttempt({ statusCode })).toBe(outcome);
  });

  it('retries when no answer came (timeout, connection error, refused address)', () => {
    expect(classifyAttempt({ error: 'timeout' })).toBe('retry');
    expect(classifyAttempt({ error: 'connection: ECONNREFUSED' })).toBe('retry');
  });
});
