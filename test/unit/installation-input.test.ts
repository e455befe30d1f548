import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkOrigin, checkSigningKey } from '../../shared/domain/installations/input.js';
import { refusedSigningKeys } from '../support/installations.js';

describe('an installation signingKey is an RSA public key in PEM, RS256 only (Installations; issue 11 item 1)', () => {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();

  it('accepts an SPKI public key and answers it as SPKI PEM', () => {
    expect(checkSigningKey(spki)).toEqual({ value: spki });
  });

  it('accepts a PKCS#1 "RSA PUBLIC KEY" and normalises it to SPKI', () => {
    const pkcs1 = pair.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();

    expect(pkcs1).toContain('BEGIN RSA PUBLIC KEY');
    expect(checkSigningKey(pkcs1)).toEqual({ value: spki });
  });

  it('accepts surrounding whitespace and CRLF line ends', () => {
    expect(checkSigningKey(`\n  ${spki.replace(/\n/g, '\r\n')}  `)).toEqual({ value: spki });
  });

  it('accepts a 4096-bit key', () => {
    const large = generateKeyPairSync('rsa', { modulusLength: 4096 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

    expect(checkSigningKey(large)).toEqual({ value: large });
  });

  it.each(refusedSigningKeys().map((entry) => [entry.label, entry] as const))('refuses %s, saying why', (_label, { value, says }) => {
    const checked = checkSigningKey(value);

    expect('problem' in checked && checked.problem).toMatch(says);
  });

  it('refuses a certificate and an RSA-PSS key', () => {
    const pss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const certificate = spki.replaceAll('PUBLIC KEY', 'CERTIFICATE');

    expect(checkSigningKey(pss)).toEqual({ problem: expect.stringMatching(/RSA-PSS key; only RSA/) });
    expect(checkSigningKey(certificate)).toEqual({ problem: expect.stringMatching(/CERTIFICATE/) });
  });
});

describe('allowedOrigins entries are exact origins, as browsers send them in Origin', () => {
  it.each([
    ['https://app.example.com', 'https://app.example.com'],
    ['HTTPS://App.Example.COM', 'https://app.example.com'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['https://example.com:443', 'https://example.com'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
  ])('accepts %s as %s', (input, origin) => {
    expect(checkOrigin(input)).toEqual({ value: origin });
  });

  it.each([
    'https://example.com/',
    'https://example.com/app',
    'https://example.com?x=1',
    'https://example.com#top',
    'https://user:pass@example.com',
    'https://*.example.com',
    'example.com',
    '//example.com',
    'null',
    '*',
    '',
    'https://example.com:99999',
    'https://exa mple.com',
  ])('refuses %j', (input) => {
    expect(checkOrigin(input)).toEqual({ problem: expect.stringMatching(/origin like/) });
  });

  it.each(['ftp://example.com', 'ws://example.com', 'file://host', 'javascript://example.com'])('refuses the scheme of %s', (input) => {
    expect(checkOrigin(input)).toEqual({ problem: 'must use http or https' });
  });
});
