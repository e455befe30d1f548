import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, distinctEventTypes } from '../../shared/domain/webhooks/input.js';

const accepted = (url: string, mode: 'local' | 'aws') => 'value' in checkWebhookUrl(url, mode);

describe('checkWebhookUrl (issue 12 item 1: https when deployed, http to loopback locally only)', () => {
  it('takes https to public hosts in both modes', () => {
    for (const mode of ['local', 'aws'] as const) {
      expect(accepted('https://hooks.example.com/in', mode)).toBe(true);
      expect(accepted('https://93.184.216.34:8443/in', mode)).toBe(true);
    }
  });

  it('takes http only to loopback, and only locally', () => {
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:3000/', 'http://[::1]:80/', 'http://127.1/']) {
      expect(accepted(url, 'local'), url).toBe(true);
      expect(accepted(url, 'aws'), url).toBe(false);
    }
    expect(accepted('http://hooks.example.com/', 'local')).toBe(false);
    expect(accepted('http://93.184.216.34/', 'local')).toBe(false);
  });

  it('refuses private, loopback, link-local and metadata literals deployed, in any notation', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://10.0.0.1/',
      'https://169.254.169.254/latest',
      'https://[::ffff:169.254.169.254]/',
      'https://0x7f000001/',
      'https://[fd00::1]/',
      'https://localhost/',
      'https://192.168.1.1./',
    ]) {
      expect(accepted(url, 'aws'), url).toBe(false);
    }
    // Locally, loopback is where test receivers listen; other private ranges stay refused.
    expect(accepted('https://127.0.0.1/', 'local')).toBe(true);
    expect(accepted('https://10.0.0.1/', 'local')).toBe(false);
  });

  it('refuses other schemes, credentials and non-URLs with a sentence', () => {
    for (const url of ['ftp://example.com/', 'javascript:alert(1)', 'https://user:secret@example.com/', 'not a url']) {
      const checked = checkWebhookUrl(url, 'aws');
      expect('problem' in checked && checked.problem.length > 0, url).toBe(true);
    }
  });
});

describe('distinctEventTypes', () => {
  it('drops repeats, keeping the first order', () => {
    expect(distinctEventTypes(['markup_ready', 'comment_created', 'markup_ready'])).toEqual(['markup_ready', 'comment_created']);
  });
});
