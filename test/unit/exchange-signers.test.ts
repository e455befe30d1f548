import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { GetPublicKeyCommand, SignCommand } from '@aws-sdk/client-kms';
import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { derToJoseSignature, kmsKeyId, kmsPublicKey, kmsSigner } from '../../shared/auth/exchange-signers.js';
import { checkExchangeToken, signExchangeToken, type ExchangeGrant } from '../../shared/auth/exchange-tokens.js';
import { UnauthorizedError } from '../../shared/errors.js';
import { derSignature, fakeKms } from '../support/fake-kms.js';

const grant: ExchangeGrant = {
  organizationId: 'org-1',
  workspaceId: 'ws-1',
  userId: 'user-1',
  externalId: 'customer-42',
  installationId: 'inst-1',
  markupRole: 'project:viewer',
};
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('DER ECDSA signatures (what KMS answers) to JWS r||s', () => {
  it("matches node's own ieee-p1363 encoding for the same signature", () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (let i = 0; i < 50; i++) {
      const der = sign('sha256', Buffer.from(`message ${i}`), privateKey);
      const raw = derToJoseSignature(der);
      expect(raw).toHaveLength(64);
      expect(verify('sha256', Buffer.from(`message ${i}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
    }
  });

  it('left-pads short scalars and drops the sign byte of scalars with the high bit set', () => {
    const high = 2n ** 255n + 5n;
    expect(hex(derToJoseSignature(derSignature(1n, high)))).toBe(`${'00'.repeat(31)}01${'80'}${'00'.repeat(30)}05`);
    expect(hex(derToJoseSignature(derSignature(high, 0x1234n)))).toBe(`80${'00'.repeat(30)}05${'00'.repeat(30)}1234`);
  });

  it('refuses anything that is not exactly one DER P-256 signature', () => {
    const good = derSignature(5n, 7n);
    const tooLong = derSignature(2n ** 256n + 1n, 7n);
    for (const bad of [
      Buffer.alloc(0),
      Buffer.from([0x31, ...good.subarray(1)]),
      Buffer.concat([good, Buffer.of(0)]),
      good.subarray(0, good.length - 1),
      Buffer.from([0x30, 0x82, 0x00, 0x06, ...good.subarray(2)]),
      Buffer.from([0x30, 0x03, 0x02, 0x01, 0x05]),
      tooLong,
      Buffer.alloc(64, 1),
    ]) {
      expect(() => derToJoseSignature(bad), hex(bad)).toThrow(/not a DER ECDSA/);
    }
  });
});

describe('the KMS signer (a fake KMS that signs digests with a node EC key and answers DER)', () => {
  it('sends KMS only the SHA-256 digest (MessageType DIGEST, ECDSA_SHA_256) and answers a signature node verifies', async () => {
    const kms = fakeKms();
    const signer = kmsSigner(kms, kms.keyArn);
    expect(signer.kid).toBe('1234abcd-12ab-34cd-56ef-1234567890ab');
    for (let i = 0; i < 20; i++) {
      const input = Buffer.from(`header.payload-${i}`);
      const raw = await signer.sign(input);
      expect(raw).toHaveLength(64);
      expect(verify('sha256', input, { key: kms.publicKey, dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
    }
    expect(kms.calls).toHaveLength(20);
    expect(kms.calls.every((call) => call instanceof SignCommand && call.input.MessageType === 'DIGEST')).toBe(true);
  });

  it('mints exchange tokens that jose verifies as ES256 with the key GetPublicKey answers, under the KMS key id', async () => {
    const kms = fakeKms();
    const publicKey = await kmsPublicKey(kms, kms.keyArn);
    const { token } = await signExchangeToken(kmsSigner(kms, kms.keyArn), grant);
    const { protectedHeader } = await jwtVerify(token, publicKey, { algorithms: ['ES256'] });
    expect(protectedHeader).toEqual({ alg: 'ES256', kid: kmsKeyId(kms.keyArn), typ: 'rbs-exchange+jwt' });
    const principal = await checkExchangeToken(token, { kid: kmsKeyId(kms.keyArn), key: publicKey });
    expect(principal).toMatchObject({ kind: 'endUser', userId: 'user-1', workspaceId: 'ws-1', markupRole: 'project:viewer' });
    expect(kms.calls.filter((call) => call instanceof GetPublicKeyCommand)).toHaveLength(1);
  });

  it('has tokens of another KMS key refused, under its own kid or under ours', async () => {
    const ours = fakeKms();
    const theirs = fakeKms('ffffffff-12ab-34cd-56ef-1234567890ab');
    const expected = { kid: kmsKeyId(ours.keyArn), key: await kmsPublicKey(ours, ours.keyArn) };
    const { token } = await signExchangeToken(kmsSigner(theirs, theirs.keyArn), grant);
    await expect(checkExchangeToken(token, expected)).rejects.toBeInstanceOf(UnauthorizedError);
    const { token: impostor } = await signExchangeToken({ ...kmsSigner(theirs, theirs.keyArn), kid: expected.kid }, grant);
    await expect(checkExchangeToken(impostor, expected)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('refuses a KMS key that is not a P-256 signing key, and an ARN that names no key', async () => {
    const kms = fakeKms();
    const symmetric = {
      send: (async () => ({ KeyId: kms.keyArn, KeySpec: 'SYMMETRIC_DEFAULT', KeyUsage: 'ENCRYPT_DECRYPT' })) as typeof kms.send,
    };
    await expect(kmsPublicKey(symmetric, kms.keyArn)).rejects.toThrow(/not an ECC_NIST_P256 SIGN_VERIFY key/);
    expect(() => kmsKeyId('arn:aws:kms:eu-west-1:111122223333:alias/exchange')).toThrow(/Not a KMS key ARN/);
  });
});
