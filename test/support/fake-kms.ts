import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { GetPublicKeyCommand, SignCommand } from '@aws-sdk/client-kms';
import type { KmsSender } from '../../shared/auth/exchange-signers.js';

/**
 * A stand-in for AWS KMS holding one ECC_NIST_P256 SIGN_VERIFY key (a node EC key): `Sign` takes a
 * SHA-256 digest (MessageType DIGEST) and answers a DER ECDSA signature, `GetPublicKey` the SPKI
 * DER, as KMS does. Node cannot sign a precomputed digest, so the ECDSA step is done here with
 * BigInt (FIPS 186-4 6.4; slow and not constant-time, fine for a test).
 */
export interface FakeKms extends KmsSender {
  readonly keyArn: string;
  readonly publicKey: KeyObject;
  /** The commands received, in order. */
  readonly calls: (SignCommand | GetPublicKeyCommand)[];
}

const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const A = P - 3n;
const G: Point = [
  0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n,
  0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n,
];
type Point = [bigint, bigint] | null;

const mod = (value: bigint, m: bigint) => ((value % m) + m) % m;
function inverse(value: bigint, m: bigint): bigint {
  let [a, b, x, y] = [mod(value, m), m, 1n, 0n];
  while (b !== 0n) {
    const q = a / b;
    [a, b, x, y] = [b, a - q * b, y, x - q * y];
  }
  return mod(x, m);
}
function add(p1: Point, p2: Point): Point {
  if (!p1) return p2;
  if (!p2) return p1;
  if (p1[0] === p2[0] && mod(p1[1] + p2[1], P) === 0n) return null;
  const slope =
    p1[0] === p2[0] ? mod((3n * p1[0] * p1[0] + A) * inverse(2n * p1[1], P), P) : mod((p2[1] - p1[1]) * inverse(p2[0] - p1[0], P), P);
  const x = mod(slope * slope - p1[0] - p2[0], P);
  return [x, mod(slope * (p1[0] - x) - p1[1], P)];
}
function multiply(k: bigint, point: Point): Point {
  let result: Point = null;
  for (let addend = point; k > 0n; k >>= 1n, addend = add(addend, addend)) if (k & 1n) result = add(result, addend);
  return result;
}
const toBigInt = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);

/** DER INTEGER of a non-negative value: minimal bytes, a 0x00 in front when the high bit is set. */
function derInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.of(0), bytes]);
  return Buffer.concat([Buffer.of(0x02, bytes.length), bytes]);
}

/** ECDSA over a SHA-256 digest with the private scalar `d`, answered as DER (as KMS Sign does). */
export function signDigest(d: bigint, digest: Uint8Array): Buffer {
  const e = toBigInt(digest);
  for (;;) {
    const k = mod(toBigInt(randomBytes(40)), N - 1n) + 1n;
    const r = mod(multiply(k, G)![0], N);
    const s = mod(inverse(k, N) * (e + r * d), N);
    if (r !== 0n && s !== 0n) return derSignature(r, s);
  }
}

/** `SEQUENCE { INTEGER r, INTEGER s }`. */
export function derSignature(r: bigint, s: bigint): Buffer {
  const body = Buffer.concat([derInteger(r), derInteger(s)]);
  return Buffer.concat([Buffer.of(0x30, body.length), body]);
}

/** A fake KMS with a fresh P-256 key. `keyId` ends its ARN, as a real key id does. */
export function fakeKms(keyId = '1234abcd-12ab-34cd-56ef-1234567890ab'): FakeKms {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const d = toBigInt(Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url'));
  const keyArn = `arn:aws:kms:eu-west-1:111122223333:key/${keyId}`;
  const calls: (SignCommand | GetPublicKeyCommand)[] = [];
  const send = async (command: unknown) => {
    if (command instanceof SignCommand) {
      calls.push(command);
      const { KeyId, Message, MessageType, SigningAlgorithm } = command.input;
      if (KeyId !== keyArn || MessageType !== 'DIGEST' || SigningAlgorithm !== 'ECDSA_SHA_256' || Message?.length !== 32) {
        throw new Error(
          `Fake KMS: unexpected Sign input ${JSON.stringify({ KeyId, MessageType, SigningAlgorithm, length: Message?.length })}`,
        );
      }
      return { KeyId: keyArn, Signature: new Uint8Array(signDigest(d, Message)), SigningAlgorithm };
    }
    if (command instanceof GetPublicKeyCommand) {
      calls.push(command);
      if (command.input.KeyId !== keyArn) throw new Error('Fake KMS: unknown key');
      return {
        KeyId: keyArn,
        KeySpec: 'ECC_NIST_P256',
        KeyUsage: 'SIGN_VERIFY',
        PublicKey: new Uint8Array(publicKey.export({ type: 'spki', format: 'der' })),
      };
    }
    throw new Error('Fake KMS: unexpected command');
  };
  return { keyArn, publicKey, calls, send: send as KmsSender['send'] };
}
