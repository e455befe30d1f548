import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { forgetExchangeKeys, newKeySetDocument, parseKeySet } from '../../shared/auth/exchange-keys.js';
import { looksLikeJwt, mintExchangeToken, verifyExchangeToken, type ExchangeGrant } from '../../shared/auth/exchange-tokens.js';
import { ENV, resetConfig } from '../../shared/config.js';
import { UnauthorizedError } from '../../shared/http/errors.js';

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
beforeEach(() => useKeys(JSON.stringify({ kid: 'k1', secret: 'a'.repeat(48) })));

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
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'k1', typ: 'rbs-exchange+jwt' }).sign(new TextEncoder().encode('b'.repeat(48)));
    await refused(forged);
    const unknownKid = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'k9', typ: 'rbs-exchange+jwt' }).sign(new TextEncoder().encode('a'.repeat(48)));
    await refused(unknownKid);
  });

  it('refuses an expired token', async () => {
    const { token } = await mintExchangeToken(grant, Date.now() - 3_600_000);
    await refused(token);
  });

  it('accepts tokens of the previous key during a rotation, and only the current key signs', async () => {
    const { token: old } = await mintExchangeToken(grant);
    useKeys(JSON.stringify({ kid: 'k2', secret: 'c'.repeat(48), previous: { kid: 'k1', secret: 'a'.repeat(48) } }));
    expect((await verifyExchangeToken(old)).userId).toBe('user-1');
    const { token: fresh } = await mintExchangeToken(grant);
    expect(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString())).toMatchObject({ alg: 'HS256', kid: 'k2' });
    useKeys(JSON.stringify({ kid: 'k3', secret: 'd'.repeat(48) }));
    await refused(old);
  });

  it('refuses a malformed key set rather than sign with it', () => {
    expect(() => parseKeySet('{"kid":"k1","secret":"short"}')).toThrow(/malformed/);
    expect(() => parseKeySet('not json')).toThrow(/not JSON/);
    expect(parseKeySet(newKeySetDocument()).current.secret.length).toBeGreaterThanOrEqual(32);
  });
});
