import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { forgetExchangeKeys, newKeyDocument, parseKeyDocument } from '../../shared/auth/exchange-keys.js';
import { looksLikeJwt, mintExchangeToken, verifyExchangeToken, type ExchangeGrant } from '../../shared/auth/exchange-tokens.js';
import { ENV, resetConfig } from '../../shared/config.js';
import { UnauthorizedError } from '../../shared/errors.js';

const grant: ExchangeGrant = {
  organizationId: 'org-1',
  workspaceId: 'ws-1',
  userId: 'user-1',
  externalId: 'customer-42',
  installationId: 'inst-1',
  markupRole: 'project:contributor',
  markupId: 'markup-1',
};

let dir: string;
let file: string;
const useKeys = (document: string) => {
  writeFileSync(file, document);
  forgetExchangeKeys();
};
/** A key document of a fresh P-256 key under `kid`. */
const keyDocument = (kid: string) => JSON.stringify({ ...(JSON.parse(newKeyDocument()) as object), kid });
const serviceKey = keyDocument('k1');
const { privateKey: otherKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'exchange-keys-'));
  file = join(dir, 'keys.json');
  process.env[ENV.exchangeKeysFile] = file;
  resetConfig();
});
afterAll(() => {
  delete process.env[ENV.exchangeKeysFile];
  resetConfig();
  forgetExchangeKeys();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => useKeys(serviceKey));

const refused = async (token: string) => {
  await expect(verifyExchangeToken(token)).rejects.toBeInstanceOf(UnauthorizedError);
};

describe('exchange tokens: minted and verified with the service key, nothing else accepted', () => {
  it('round-trips every claim of the grant into an end-user principal', async () => {
    const { token, expiresAt } = await mintExchangeToken(grant);
    expect(looksLikeJwt(token)).toBe(true);
    expect(expiresAt.getTime() - Date.now()).toBeGreaterThan(290_000);
    expect(await verifyExchangeToken(token)).toEqual({
      kind: 'endUser',
      scope: 'workspace',
      organizationId: 'org-1',
      workspaceId: 'ws-1',
      userId: 'user-1',
      externalId: 'customer-42',
      installationId: 'inst-1',
      markupRole: 'project:contributor',
      markupId: 'markup-1',
      actsAsMember: false,
      expiresAt: expiresAt.getTime(),
    });
  });

  it('leaves markupId out of a workspace-scoped token', async () => {
    const { token } = await mintExchangeToken({ ...grant, markupId: undefined });
    expect(await verifyExchangeToken(token)).not.toHaveProperty('markupId');
  });

  it('refuses an altered payload, an altered signature and a truncated token', async () => {
    const { token } = await mintExchangeToken(grant);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const promoted = Buffer.from(JSON.stringify({ ...claims, role: 'project:owner' })).toString('base64url');
    await refused(`${header}.${promoted}.${signature}`);
    await refused(`${header}.${payload}.${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`);
    await refused(`${header}.${payload}.`);
  });

  it('refuses alg none, a token signed with another key, and one naming an unknown kid', async () => {
    const { token } = await mintExchangeToken(grant);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const unsecured = new UnsecuredJWT(claims).encode();
    await refused(unsecured);
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: 'k1', typ: 'rbs-exchange+jwt' })
      .sign(new TextEncoder().encode('b'.repeat(48)));
    await refused(forged);
    const unknownKid = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k9', typ: 'rbs-exchange+jwt' })
      .sign(parseKeyDocument(serviceKey).privateKey);
    await refused(unknownKid);
  });

  it('refuses HS256 keyed with the public key, and ES256 under the right kid from another EC key', async () => {
    const { token } = await mintExchangeToken(grant);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const publicKey = createPublicKey(parseKeyDocument(serviceKey).privateKey);
    const header = { alg: 'HS256', kid: 'k1', typ: 'rbs-exchange+jwt' };
    // Every form a confused verifier could take the public key in as an HMAC secret.
    for (const secret of [
      publicKey.export({ type: 'spki', format: 'pem' }),
      publicKey.export({ type: 'spki', format: 'der' }),
      JSON.stringify(publicKey.export({ format: 'jwk' })),
    ]) {
      await refused(
        await new SignJWT(claims).setProtectedHeader(header).sign(typeof secret === 'string' ? new TextEncoder().encode(secret) : secret),
      );
    }
    await refused(await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'rbs-exchange+jwt' }).sign(otherKey));
  });

  it('refuses an expired token', async () => {
    const { token } = await mintExchangeToken(grant, Date.now() - 3_600_000);
    await refused(token);
  });

  it('signs ES256 under the current key; after a rotation tokens of the old key are refused', async () => {
    const { token: old } = await mintExchangeToken(grant);
    expect(JSON.parse(Buffer.from(old.split('.')[0]!, 'base64url').toString())).toEqual({
      alg: 'ES256',
      kid: 'k1',
      typ: 'rbs-exchange+jwt',
    });
    expect(Buffer.from(old.split('.')[2]!, 'base64url')).toHaveLength(64);
    useKeys(keyDocument('k2'));
    const { token: fresh } = await mintExchangeToken(grant);
    expect(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString())).toMatchObject({ alg: 'ES256', kid: 'k2' });
    expect((await verifyExchangeToken(fresh)).userId).toBe('user-1');
    await refused(old);
    // The same kid with another key is no better.
    useKeys(keyDocument('k1'));
    await refused(old);
  });

  it('refuses a malformed key document rather than sign with it', () => {
    const { jwk } = JSON.parse(newKeyDocument()) as { jwk: Record<string, string> };
    expect(() => parseKeyDocument('not json')).toThrow(/not JSON/);
    expect(() => parseKeyDocument(JSON.stringify({ kid: 'k1', secret: 'a'.repeat(48) }))).toThrow(/malformed/);
    expect(() => parseKeyDocument(JSON.stringify({ kid: 'k1', jwk: { ...jwk, d: undefined } }))).toThrow(/malformed/);
    expect(() => parseKeyDocument(JSON.stringify({ kid: 'k1', jwk: { ...jwk, crv: 'P-384' } }))).toThrow(/malformed/);
    expect(() => parseKeyDocument(JSON.stringify({ kid: 'k1', jwk: { ...jwk, x: jwk.y } }))).toThrow(/no usable/);
    const parsed = parseKeyDocument(newKeyDocument());
    expect(parsed.kid).toMatch(/^local-[A-Za-z0-9_-]{16}$/);
    expect(parsed.privateKey.asymmetricKeyDetails).toEqual({ namedCurve: 'prime256v1' });
  });
});
