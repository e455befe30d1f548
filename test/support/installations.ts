import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { expect } from 'vitest';
import type { Installation } from '../../shared/domain/installations/installations.js';
import { call } from './api.js';

const pem = (key: KeyObject, type: 'spki' | 'pkcs1' | 'pkcs8') => key.export({ type, format: 'pem' }).toString();

let rsa: { publicKey: string; privateKey: string } | undefined;

/** One RSA-2048 key pair per test file (generating one takes a while): the customer's signing key. */
export function customerKeyPair(): { publicKey: string; privateKey: string } {
  rsa ??= generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return rsa;
}

/** Every kind of `signingKey` an installation refuses, generated fresh, with the words its 400 names. */
export function refusedSigningKeys(): { label: string; value: string; says: RegExp }[] {
  const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ed = generateKeyPairSync('ed25519');
  const full = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = pem(full.publicKey, 'spki');
  return [
    { label: 'an EC P-256 public key', value: pem(ec.publicKey, 'spki'), says: /EC key; only RSA/ },
    { label: 'an Ed25519 public key', value: pem(ed.publicKey, 'spki'), says: /ED25519 key; only RSA/ },
    { label: 'an RSA-1024 public key', value: pem(small.publicKey, 'spki'), says: /1024-bit RSA key; at least 2048/ },
    { label: 'an RSA private key (PKCS#8)', value: pem(full.privateKey, 'pkcs8'), says: /private key.*send the public key/ },
    { label: 'an RSA private key (PKCS#1)', value: pem(full.privateKey, 'pkcs1'), says: /private key.*send the public key/ },
    { label: 'an HS256 shared secret', value: 'my-very-secret-hmac-key-0123456789', says: /RSA public key in PEM.*HS256/ },
    {
      label: 'broken PEM (characters outside base64)',
      value: spki.replace(/\n[A-Za-z0-9+/]{10}/, '\n!!!!!!!!!!'),
      says: /well-formed PEM block/,
    },
    {
      label: 'broken PEM (bytes that are no key)',
      value: `-----BEGIN PUBLIC KEY-----\n${Buffer.from('no key in here').toString('base64')}\n-----END PUBLIC KEY-----`,
      says: /not a readable PEM public key/,
    },
    { label: 'broken PEM (cut short)', value: spki.slice(0, 120), says: /well-formed PEM block/ },
    { label: 'two PEM blocks', value: spki + spki, says: /well-formed PEM block/ },
    { label: 'an empty string', value: '', says: /must not be empty|RSA public key in PEM/ },
  ];
}

/** POST /installations with a fresh RSA public key unless the body names one; 200 asserted. */
export async function createInstallation(key: string, body: Record<string, unknown> = {}) {
  const response = await call('POST', '/installations', { key, body: { signingKey: customerKeyPair().publicKey, ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as Installation;
}
