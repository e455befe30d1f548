import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalStack, type LocalStack, type ServicesInfo, type StackInfo } from '../../infra/local/stack.js';
import { ENV } from '../../shared/config.js';
import { startIdentityProvider, type TestIdentityProvider } from './identity-provider.js';

declare module 'vitest' {
  export interface ProvidedContext {
    localStack: { stack: StackInfo; services: ServicesInfo; dataDir: string };
    identityProvider: TestIdentityProvider;
    /** The run's `ORIGIN_VERIFY`: what the web stack's distribution would send as `X-Origin-Verify`. */
    originVerify: string;
  }
}

let local: LocalStack | undefined;
let dataDir: string | undefined;
let stopIdentityProvider: (() => Promise<void>) | undefined;

/**
 * One real local stack (DynamoDB Local, s3rver + front, local-aws-sqs, gateway) for the whole run,
 * with an identity provider of the run's own for the SDK exchange: the stack reads IDP_* from its
 * environment, as `npm start` does; and an ORIGIN_VERIFY of its own, so tests can call as the web
 * stack's distribution does.
 */
export async function setup(project: TestProject): Promise<void> {
  process.env.LOG_LEVEL ??= 'warn';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const idp = await startIdentityProvider();
  stopIdentityProvider = idp.close;
  Object.assign(process.env, {
    [ENV.idpJwksUrl]: idp.provider.jwksUrl,
    [ENV.idpIssuer]: idp.provider.issuer,
    [ENV.idpAudience]: idp.provider.audience,
  });
  project.provide('identityProvider', idp.provider);
  // As deployed behind the distribution: a request with this proof may name its viewer's address
  // (shared/http/viewer-address.ts); tests play the distribution with it. `npm start` sets none.
  const originVerify = randomBytes(32).toString('base64url');
  process.env[ENV.originVerify] = originVerify;
  project.provide('originVerify', originVerify);
  dataDir = mkdtempSync(join(tmpdir(), 'review-board-test-'));
  local = await startLocalStack({ port: 0, dataDir, memory: true });
  project.provide('localStack', { stack: local.stack, services: local.services, dataDir });
}

export async function teardown(): Promise<void> {
  await local?.stop();
  await stopIdentityProvider?.();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
