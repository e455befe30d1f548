import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { getKms } from '../clients.js';
import { ConfigError, getConfig } from '../config.js';
import { kmsKeyId, kmsPublicKey, kmsSigner, localSigner, type ExchangeTokenSigner } from './exchange-signers.js';

/**
 * The key exchange tokens are signed with (ES256, P-256). It never enters the repository: a
 * deployed stack keeps it in KMS (`EXCHANGE_KEY_ARN`; only the auth function may `kms:Sign`, the
 * others may only `kms:GetPublicKey`), the local stack in a file of its DATA_DIR holding a private
 * JWK and its `kid` (`EXCHANGE_KEYS_FILE`).
 *
 * Each is loaded once per process and cached: a verifier fetches the public key once per cold
 * start and then verifies with no network call; a token naming any other `kid` is refused, never
 * looked up. Rotation is a new key (docs/embedded-commenting.md, "Exchange tokens: keys, rotation and liveness"): tokens of the old one
 * fail, for at most their lifetime.
 */

/** The public key tokens are verified with, and the `kid` they must name. */
export interface ExchangeVerificationKey {
  kid: string;
  key: KeyObject;
}

const Base64Url = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]+$/));
const KeyDocument = v.object({
  kid: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  jwk: v.object({ kty: v.literal('EC'), crv: v.literal('P-256'), x: Base64Url, y: Base64Url, d: Base64Url }),
});

let signer: Promise<ExchangeTokenSigner> | undefined;
let verification: Promise<ExchangeVerificationKey> | undefined;

/** A new key document for the local stack: a P-256 private JWK, its `kid` from its RFC 7638 thumbprint. */
export function newKeyDocument(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  // RFC 7638: SHA-256 of the required members in lexicographic order, no whitespace.
  const thumbprint = createHash('sha256')
    .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x: jwk.x, y: jwk.y }))
    .digest('base64url');
  return JSON.stringify({ kid: `local-${thumbprint.slice(0, 16)}`, jwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, d: jwk.d } });
}

/** Parses a key document; a malformed one, or one holding no P-256 private key, is a configuration error. */
export function parseKeyDocument(text: string): { kid: string; privateKey: KeyObject } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError('The exchange-token key document is not JSON.');
  }
  const parsed = v.safeParse(KeyDocument, json);
  if (!parsed.success) throw new ConfigError(`The exchange-token key document is malformed: ${parsed.issues[0].message}`);
  try {
    return { kid: parsed.output.kid, privateKey: createPrivateKey({ key: parsed.output.jwk, format: 'jwk' }) };
  } catch {
    throw new ConfigError('The exchange-token key document holds no usable P-256 private key.');
  }
}

function source(): { kmsKeyArn: string } | { file: string } {
  const configured = getConfig().exchangeKeys;
  if (!configured) throw new ConfigError('No exchange-token key: set EXCHANGE_KEY_ARN (deployed) or EXCHANGE_KEYS_FILE (local).');
  return configured;
}

/** Caches a load, forgetting it when it fails so the next call tries again. */
function once<T>(load: () => Promise<T>, forget: () => void): Promise<T> {
  const promise = load();
  promise.catch(forget);
  return promise;
}

/** The signer of new tokens, made once per process. Only the minting function can use it deployed (kms:Sign). */
export function getExchangeSigner(): Promise<ExchangeTokenSigner> {
  signer ??= once(
    async () => {
      const from = source();
      if ('kmsKeyArn' in from) return kmsSigner(getKms(), from.kmsKeyArn);
      const { kid, privateKey } = parseKeyDocument(await readFile(from.file, 'utf8'));
      return localSigner(kid, privateKey);
    },
    () => (signer = undefined),
  );
  return signer;
}

/** The verification key, fetched once per process (GetPublicKey deployed, the file's public half locally). */
export function getExchangeVerificationKey(): Promise<ExchangeVerificationKey> {
  verification ??= once(
    async () => {
      const from = source();
      if ('kmsKeyArn' in from) return { kid: kmsKeyId(from.kmsKeyArn), key: await kmsPublicKey(getKms(), from.kmsKeyArn) };
      const { kid, privateKey } = parseKeyDocument(await readFile(from.file, 'utf8'));
      return { kid, key: createPublicKey(privateKey) };
    },
    () => (verification = undefined),
  );
  return verification;
}

/** Forgets the cached keys (tests, and the local stack after it changes the environment). */
export function forgetExchangeKeys(): void {
  signer = undefined;
  verification = undefined;
}
