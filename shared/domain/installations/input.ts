import { createPublicKey, type KeyObject } from 'node:crypto';
import { withArticle } from '../../english.js';

/** Customer JWTs are RS256 only; RSA keys below this size are refused (NIST SP 800-131A). */
export const MIN_RSA_BITS = 2048;
/** Most origins one installation lists. */
export const MAX_ALLOWED_ORIGINS = 50;

/** A value that passed, normalised, or why it did not (one sentence for the field's problem). */
export type Checked = { value: string } | { problem: string };

const PEM_BLOCK = /^-----BEGIN ([A-Z0-9 ]+)-----\r?\n[A-Za-z0-9+/=\s]+\r?\n-----END \1-----$/;
const PUBLIC_LABELS = new Set(['PUBLIC KEY', 'RSA PUBLIC KEY']);

/**
 * An installation's `signingKey`: exactly one PEM block holding an RSA public key of at least
 * 2048 bits, SPKI (`PUBLIC KEY`) or PKCS#1 (`RSA PUBLIC KEY`), answered as SPKI PEM. Everything
 * else is refused with the reason: HS secrets (not PEM), broken PEM, EC and Ed25519 keys,
 * certificates, and private keys, which are never parsed, let alone kept.
 */
export function checkSigningKey(text: string): Checked {
  const pem = text.trim();
  if (!pem.startsWith('-----BEGIN ')) {
    return {
      problem: 'must be an RSA public key in PEM (-----BEGIN PUBLIC KEY-----); shared secrets (HS256) are not accepted, only RS256',
    };
  }
  const label = /^-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)?.[1] ?? '';
  if (label.includes('PRIVATE'))
    return { problem: 'is a private key, which must never leave your servers; send the public key (-----BEGIN PUBLIC KEY-----)' };
  const block = PEM_BLOCK.exec(pem);
  if (!block) return { problem: 'is not one well-formed PEM block (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----)' };
  if (!PUBLIC_LABELS.has(label))
    return {
      problem: `is a PEM "${label}"; send the RSA public key itself (-----BEGIN PUBLIC KEY----- or -----BEGIN RSA PUBLIC KEY-----)`,
    };
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    return { problem: 'is not a readable PEM public key' };
  }
  if (key.asymmetricKeyType !== 'rsa')
    return {
      problem: `is ${withArticle(key.asymmetricKeyType?.toUpperCase() ?? 'unknown')} key; only RSA public keys (RS256) are accepted`,
    };
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) return { problem: `is ${withArticle(bits)}-bit RSA key; at least ${MIN_RSA_BITS} bits are needed` };
  return { value: key.export({ type: 'spki', format: 'pem' }).toString() };
}

const ORIGIN_SHAPE = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s\\]+$/i;

/**
 * One entry of `allowedOrigins`: an exact origin as browsers send it in `Origin`, `http` or `https`
 * `://host[:port]` with no path, query, fragment, credentials or trailing slash; answered lower-cased
 * with a default port dropped and an international host in punycode, so it compares equal to the header.
 */
export function checkOrigin(text: string): Checked {
  const refused = {
    problem:
      'must be an origin like https://app.example.com or http://localhost:3000 (scheme, host and optional port; no path, query or trailing slash)',
  };
  if (!ORIGIN_SHAPE.test(text)) return refused;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refused;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'must use http or https' };
  // A host name or an IP address as the URL parser writes them: no wildcards or other odd characters.
  if (!/^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/.test(url.hostname)) return refused;
  return { value: url.origin };
}

/**
 * The `Origin` header when it is one a browser sends for a web page (`http(s)://host[:port]`,
 * lower-case, at most 300 characters), else undefined: `null`, file pages and anything odd are
 * never looked up.
 */
export function browserOrigin(header: string | undefined): string | undefined {
  if (header === undefined || header.length > 300) return undefined;
  return /^https?:\/\/(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/.test(header) ? header : undefined;
}
