import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import * as v from 'valibot';
import { getSecretsManager } from '../clients.js';
import { ConfigError, getConfig } from '../config.js';

/**
 * The keys exchange tokens are signed with. They never enter the repository: a deployed stack keeps
 * them in a Secrets Manager secret (CDK generates its value), the local stack in a file of its
 * DATA_DIR. Both hold the same JSON: the current key and, during a rotation, the previous one, each
 * with a `kid` so a token names the key that signed it.
 *
 * Read once per process and cached, so verifying a token costs no network call; a token naming a
 * `kid` the cache does not know triggers one reload (a rotation happened), at most every 30 s.
 */

export interface ExchangeKey {
  kid: string;
  secret: Uint8Array;
}

export interface ExchangeKeySet {
  current: ExchangeKey;
  previous?: ExchangeKey;
}

/** At least 32 bytes of key for HS256 (RFC 7518 3.2); the generated secrets have more. */
const Key = v.object({ kid: v.pipe(v.string(), v.minLength(1), v.maxLength(64)), secret: v.pipe(v.string(), v.minLength(32)) });
const KeySetDocument = v.object({ ...Key.entries, previous: v.optional(Key) });

const RELOAD_INTERVAL_MS = 30_000;
let cached: { keys: Promise<ExchangeKeySet>; loadedAt: number } | undefined;

/** A new key set document for the local stack: a random 48-byte secret and a random `kid`. */
export function newKeySetDocument(): string {
  return JSON.stringify({ kid: `local-${randomBytes(4).toString('hex')}`, secret: randomBytes(48).toString('base64url') });
}

/** Parses a key set document; a malformed one is a configuration error, never a usable key. */
export function parseKeySet(text: string): ExchangeKeySet {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError('The exchange-token key set is not JSON.');
  }
  const parsed = v.safeParse(KeySetDocument, json);
  if (!parsed.success) throw new ConfigError(`The exchange-token key set is malformed: ${parsed.issues[0].message}`);
  const toKey = (key: v.InferOutput<typeof Key>): ExchangeKey => ({ kid: key.kid, secret: new TextEncoder().encode(key.secret) });
  const { previous, ...current } = parsed.output;
  return { current: toKey(current), ...(previous ? { previous: toKey(previous) } : {}) };
}

async function load(): Promise<ExchangeKeySet> {
  const source = getConfig().exchangeKeys;
  if (!source) throw new ConfigError('No exchange-token keys: set EXCHANGE_KEYS_SECRET_ARN (deployed) or EXCHANGE_KEYS_FILE (local).');
  if ('file' in source) return parseKeySet(await readFile(source.file, 'utf8'));
  const result = await getSecretsManager().send(new GetSecretValueCommand({ SecretId: source.secretArn }));
  if (!result.SecretString) throw new ConfigError('The exchange-token secret has no string value.');
  return parseKeySet(result.SecretString);
}

/** The key set, read once per process (see above). */
export function getExchangeKeys(): Promise<ExchangeKeySet> {
  if (!cached) {
    const keys = load();
    cached = { keys, loadedAt: Date.now() };
    keys.catch(() => {
      cached = undefined;
    });
  }
  return cached.keys;
}

/** The key named `kid`, reloading the set once when it is unknown and the last load is not recent. */
export async function findExchangeKey(kid: string): Promise<ExchangeKey | undefined> {
  const find = (set: ExchangeKeySet) => [set.current, set.previous].find((key) => key?.kid === kid);
  const found = find(await getExchangeKeys());
  if (found || !cached || Date.now() - cached.loadedAt < RELOAD_INTERVAL_MS) return found;
  cached = undefined;
  return find(await getExchangeKeys());
}

/** Forgets the cached keys (tests, and the local stack after it changes the environment). */
export function forgetExchangeKeys(): void {
  cached = undefined;
}
