import type { StackInfo } from '../infra/local/stack.js';
import { apiPost, benchInstallation } from './installation.js';
import { formatRow, measure, type Measurement } from './measure.js';
import { threadBody } from './requests.js';

/**
 * Issue 11's rows: what the embedded client's credential costs. `POST /auth/exchange` (verify an
 * RS256 customer JWT, read the installation, the workspace and the external user, mint a token)
 * and a thread created with an exchange token beside the same thread created with an API key.
 */
export async function benchExchange(stack: StackInfo, options: { durationMs: number; concurrency: number }): Promise<Measurement[]> {
  const post = apiPost(stack);
  const installation = await benchInstallation(stack);
  // Customers sign on their own servers; the bench signs a pool of JWTs (8 end users) up front so it
  // measures only our side. They live the 15 minutes the exchange accepts at most (exp - iat).
  const jwts = await Promise.all(
    Array.from({ length: 8 }, (_, i) => installation.sign({ sub: `bench-user-${i}`, name: `Bench user ${i}` }, '15m')),
  );
  // A pool of markups taken in turn, so concurrent creations do not collide on one markup's counters.
  const markups: string[] = [];
  for (let i = 0; i < 16; i += 1)
    markups.push((await post('/markups/url', { url: `https://example.com/exchange-${i}` }, stack.workspaceApiKey)).id);

  let turn = 0;
  const next = <T>(pool: readonly T[]) => pool[(turn += 1) % pool.length]!;
  const results: Measurement[] = [];
  const row = (measurement: Measurement) => {
    results.push(measurement);
    process.stdout.write(`${formatRow(measurement)}\n`);
    return measurement;
  };
  for (const concurrency of [1, options.concurrency]) {
    const settings = { durationMs: options.durationMs, concurrency, warmup: 20 };
    row(
      await measure(
        `POST /auth/exchange (c=${concurrency})`,
        async () => void (await post('/auth/exchange', { token: next(jwts) })),
        settings,
      ),
    );
    // Tokens live 5 minutes: mint the ones this round uses now.
    const tokens: string[] = await Promise.all(
      jwts.map(async (token) => (await post('/auth/exchange', { token })).exchangeToken as string),
    );
    const withKey = row(
      await measure(
        `POST /threads, API key (c=${concurrency})`,
        async () => void (await post('/threads', threadBody(next(markups)), stack.workspaceApiKey)),
        settings,
      ),
    );
    const withToken = row(
      await measure(
        `POST /threads, exchange token (c=${concurrency})`,
        async () => void (await post('/threads', threadBody(next(markups)), next(tokens))),
        settings,
      ),
    );
    process.stdout.write(
      `${'  exchange token / API key'.padEnd(44)} p50 ${(withToken.p50 / withKey.p50).toFixed(2)}x   p99 ${(withToken.p99 / withKey.p99).toFixed(2)}x\n\n`,
    );
  }
  return results;
}
