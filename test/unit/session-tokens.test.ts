import { createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseKeyDocument, newKeyDocument } from '../../shared/auth/exchange-keys.js';
import { localSigner } from '../../shared/auth/exchange-signers.js';
import { checkExchangeToken, signExchangeToken } from '../../shared/auth/exchange-tokens.js';
import { checkSessionToken, SESSION_TOKEN_TTL_SECONDS, signSessionToken } from '../../shared/auth/session-tokens.js';
import { hashSignInCode } from '../../shared/db/sign-in.js';
import { addressSubject, signInLink, SIGN_IN_RATE_LIMITS, windowOf } from '../../shared/domain/sign-in/email-sign-in.js';
import { UnauthorizedError } from '../../shared/errors.js';

const keyOf = (kid: string) => {
  const { privateKey } = parseKeyDocument(JSON.stringify({ ...(JSON.parse(newKeyDocument()) as object), kid }));
  return { signer: localSigner(kid, privateKey), verification: { kid, key: createPublicKey(privateKey) } };
};
const service = keyOf('k1');

describe('session tokens (issue 30 part 2): the third credential kind', () => {
  it('round-trips the user and a session id, and lives 12 hours', async () => {
    const now = Date.now();
    const minted = await signSessionToken(service.signer, 'user-1', now);

    const principal = await checkSessionToken(minted.token, service.verification);

    expect(principal).toEqual({
      kind: 'session',
      scope: 'member',
      userId: 'user-1',
      sessionId: minted.sessionId,
      expiresAt: minted.expiresAt.getTime(),
      actsAsMember: true,
    });
    expect(SESSION_TOKEN_TTL_SECONDS).toBe(12 * 60 * 60);
    expect(minted.expiresAt.getTime() - Math.floor(now / 1000) * 1000).toBe(SESSION_TOKEN_TTL_SECONDS * 1000);
  });

  it('refuses an expired token, another key, a tampered payload, and an exchange token (each way round)', async () => {
    const expired = await signSessionToken(service.signer, 'user-1', Date.now() - (SESSION_TOKEN_TTL_SECONDS + 60) * 1000);
    const otherKey = await signSessionToken(keyOf('k1').signer, 'user-1');
    const fresh = await signSessionToken(service.signer, 'user-1');
    const [header, , signature] = fresh.token.split('.');
    const tampered = `${header}.${Buffer.from(JSON.stringify({ sub: 'user-2', jti: 'x', exp: 9_999_999_999 })).toString('base64url')}.${signature}`;
    const exchange = await signExchangeToken(service.signer, {
      organizationId: 'org-1',
      workspaceId: 'ws-1',
      userId: 'user-1',
      externalId: 'ext-1',
      installationId: 'inst-1',
      markupRole: 'project:owner',
    });

    for (const token of [expired.token, otherKey.token, tampered, exchange.token]) {
      await expect(checkSessionToken(token, service.verification)).rejects.toBeInstanceOf(UnauthorizedError);
    }
    await expect(checkExchangeToken(fresh.token, service.verification)).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

describe('sign-in links and rate-limit windows (issue 30 part 2)', () => {
  it("puts the code in the app's /sign-in link, URL-safe", () => {
    expect(signInLink('https://review.example.com', 'abc_-9')).toBe('https://review.example.com/sign-in?code=abc_-9');
  });

  it('stores codes and addresses only as SHA-256, the same for the same input', () => {
    expect(hashSignInCode('code')).toBe(hashSignInCode('code'));
    expect(hashSignInCode('code')).not.toContain('code');
    expect(addressSubject('Ada@Example.com')).toBe(addressSubject('ada@example.com'));
    expect(addressSubject('ada@example.com')).not.toContain('ada');
  });

  it("answers the window's start and the whole seconds to its end, at least 1", () => {
    const windowMs = SIGN_IN_RATE_LIMITS.perAddress.windowMs;
    const start = 1_700_000_100_000 - (1_700_000_100_000 % windowMs);

    expect(windowOf(start, windowMs)).toEqual({ start, retryAfterSeconds: windowMs / 1000 });
    expect(windowOf(start + 1500, windowMs)).toEqual({ start, retryAfterSeconds: windowMs / 1000 - 1 });
    expect(windowOf(start + windowMs - 1, windowMs)).toEqual({ start, retryAfterSeconds: 1 });
    expect(windowOf(start + windowMs, windowMs).start).toBe(start + windowMs);
  });
});
