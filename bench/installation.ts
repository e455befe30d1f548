import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import type { StackInfo } from '../infra/local/stack.js';

/** A POST of JSON to the local stack's API, with `credential` as its bearer when given; answers `data`, throws on anything but 2xx. */
export function apiPost(stack: StackInfo): (path: string, body: unknown, credential?: string) => Promise<any> {
  const headers = { 'Service-API-Version': '2023-02-22', 'Content-Type': 'application/json' };
  return async (path, body, credential) => {
    const response = await fetch(`${stack.baseUrl}/api/v2${path}`, {
      method: 'POST',
      headers: credential ? { ...headers, Authorization: `Bearer ${credential}` } : headers,
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { data: unknown }).data;
  };
}

/**
 * A real installation of the stack's workspace, and `sign`, which signs a customer JWT for it as a
 * customer's server would (RS256, the issuer and audience `GET /auth/config` names, issued now).
 */
export async function benchInstallation(stack: StackInfo): Promise<{ sign: (claims: JWTPayload, expiresIn: string) => Promise<string> }> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const installation = await apiPost(stack)(
    '/installations',
    { signingKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    stack.workspaceApiKey,
  );
  const config = (await (await fetch(`${stack.baseUrl}/api/v2/auth/config?publicKey=${installation.publicKey}`)).json()) as {
    data: { expectedAud: string; expectedIss: string };
  };
  const key: KeyObject = privateKey;
  return {
    sign: (claims, expiresIn) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuer(config.data.expectedIss)
        .setAudience(config.data.expectedAud)
        .setIssuedAt()
        .setExpirationTime(expiresIn)
        .sign(key),
  };
}
