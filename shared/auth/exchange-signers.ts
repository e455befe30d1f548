import { createHash, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { GetPublicKeyCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { ConfigError } from '../config.js';

/**
 * Who can sign exchange tokens (ES256, RFC 7518 3.4): a local P-256 private key, or a KMS key the
 * caller may `kms:Sign` with. Only the minting function holds either; every other function gets
 * the public key alone (`exchange-keys.ts`), so a verifier can never mint a token.
 */
export interface ExchangeTokenSigner {
  /** The `kid` of the tokens it signs: a stable id of its key. */
  readonly kid: string;
  /** The JWS signature of `signingInput` (`header.payload`): raw r||s, 64 bytes. */
  sign(signingInput: Uint8Array): Promise<Uint8Array>;
}

/** The part of a KMS client the signer and key loader use; tests pass a stand-in for AWS. */
export type KmsSender = Pick<KMSClient, 'send'>;

/** P-256 scalars are 32 bytes, so an ES256 signature is 64 (RFC 7518 3.4). */
const P256_SCALAR_BYTES = 32;

/** A signer holding the private key in process (the local stack). */
export function localSigner(kid: string, privateKey: KeyObject): ExchangeTokenSigner {
  return {
    kid,
    sign: async (signingInput) => sign('sha256', signingInput, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
  };
}

/** The key id of a KMS key ARN (`arn:aws:kms:<region>:<account>:key/<id>`): the `kid` of its tokens. */
export function kmsKeyId(keyArn: string): string {
  const id = /:key\/([^/]+)$/.exec(keyArn)?.[1];
  if (!id) throw new ConfigError(`Not a KMS key ARN: ${keyArn}`);
  return id;
}

/**
 * A signer whose key never leaves KMS: it sends the SHA-256 digest of the signing input
 * (MessageType DIGEST, ECDSA_SHA_256) and converts KMS's DER signature to JWS's raw r||s.
 */
export function kmsSigner(kms: KmsSender, keyArn: string): ExchangeTokenSigner {
  return {
    kid: kmsKeyId(keyArn),
    async sign(signingInput) {
      const digest = createHash('sha256').update(signingInput).digest();
      const { Signature } = await kms.send(
        new SignCommand({ KeyId: keyArn, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }),
      );
      if (!Signature) throw new Error('KMS answered Sign without a signature.');
      return derToJoseSignature(Signature);
    },
  };
}

/** The public half of the KMS key (SPKI DER), checked to be a P-256 signing key. One call per cold start. */
export async function kmsPublicKey(kms: KmsSender, keyArn: string): Promise<KeyObject> {
  const { PublicKey, KeySpec, KeyUsage } = await kms.send(new GetPublicKeyCommand({ KeyId: keyArn }));
  if (!PublicKey || KeySpec !== 'ECC_NIST_P256' || KeyUsage !== 'SIGN_VERIFY') {
    throw new ConfigError(`The exchange-token key ${keyArn} is not an ECC_NIST_P256 SIGN_VERIFY key (${KeySpec}, ${KeyUsage}).`);
  }
  return createPublicKey({ key: Buffer.from(PublicKey), format: 'der', type: 'spki' });
}

/**
 * An ECDSA signature as DER (`SEQUENCE { INTEGER r, INTEGER s }`, what KMS answers) to JWS's raw
 * r||s, each left-padded to 32 bytes. Anything else is an error, never a shorter signature.
 */
export function derToJoseSignature(der: Uint8Array): Uint8Array {
  const malformed = () => new Error('KMS answered a signature that is not a DER ECDSA P-256 signature.');
  let at = 0;
  const byte = () => {
    if (at >= der.length) throw malformed();
    return der[at++]!;
  };
  const length = () => {
    const first = byte();
    if (first < 0x80) return first;
    if (first !== 0x81) throw malformed();
    return byte();
  };
  const integer = () => {
    if (byte() !== 0x02) throw malformed();
    const size = length();
    let value = der.subarray(at, at + size);
    if (value.length !== size || size === 0) throw malformed();
    at += size;
    while (value.length > 1 && value[0] === 0) value = value.subarray(1);
    if (value.length > P256_SCALAR_BYTES) throw malformed();
    const padded = new Uint8Array(P256_SCALAR_BYTES);
    padded.set(value, P256_SCALAR_BYTES - value.length);
    return padded;
  };
  if (byte() !== 0x30 || length() !== der.length - at) throw malformed();
  const r = integer();
  const s = integer();
  if (at !== der.length) throw malformed();
  const raw = new Uint8Array(2 * P256_SCALAR_BYTES);
  raw.set(r);
  raw.set(s, P256_SCALAR_BYTES);
  return raw;
}
