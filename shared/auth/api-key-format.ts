import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `rbk_<key id: 32 hex>_<secret: 43 base64url>`. The id finds the stored record
 * with one GetItem; only SHA-256 of the 256-bit secret is stored, so a table dump reveals no key.
 * Exchange tokens are JWTs (three dot-separated parts), so the two never look alike.
 */
const PATTERN = /^rbk_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;

export interface ParsedApiKey {
  keyId: string;
  secret: string;
}

export function generateApiKey(): { apiKey: string; keyId: string; secretHash: string } {
  const keyId = randomUUID().replaceAll('-', '');
  const secret = randomBytes(32).toString('base64url');
  return { apiKey: `rbk_${keyId}_${secret}`, keyId, secretHash: hashSecret(secret) };
}

export function parseApiKey(credential: string): ParsedApiKey | undefined {
  const match = PATTERN.exec(credential);
  return match ? { keyId: match[1]!, secret: match[2]! } : undefined;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
