import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

/**
 * The test run's identity provider: a JWK set on loopback (node:http) holding an RSA and an EC key
 * it generated. Global setup starts it and hands the stack its address as `IDP_JWKS_URL` (with
 * `IDP_ISSUER`, `IDP_AUDIENCE`), as an operator would; test files sign tokens with the private
 * halves it provides (`test/support/sdk.ts`).
 */
export interface TestIdentityProvider {
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** Private JWKs, each with its `kid` and `alg`, as published (public halves) in the set. */
  keys: { rsa: JWK; ec: JWK };
}

export async function startIdentityProvider(): Promise<{ provider: TestIdentityProvider; close(): Promise<void> }> {
  const keyOf = async (alg: 'RS256' | 'ES256', kid: string) => {
    const { privateKey } = await generateKeyPair(alg, { extractable: true });
    return { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
  };
  const keys = { rsa: await keyOf('RS256', 'test-rsa'), ec: await keyOf('ES256', 'test-ec') };
  const publicHalf = ({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest }: JWK) => rest;
  const body = JSON.stringify({ keys: [publicHalf(keys.rsa), publicHalf(keys.ec)] });
  const server: Server = createServer((request, response) => {
    if (request.url !== '/.well-known/jwks.json') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}/`;
  return {
    provider: { jwksUrl: `${issuer}.well-known/jwks.json`, issuer, audience: 'review-board-sdk-test', keys },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
