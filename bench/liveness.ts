import { handler as messagesHandler } from '../functions/messages/handler.js';
import { messagesRoutes } from '../functions/messages/routes.js';
import { handler as threadsHandler } from '../functions/threads/handler.js';
import { threadsRoutes } from '../functions/threads/routes.js';
import type { StackInfo } from '../infra/local/stack.js';
import { setLivenessModeForBench, type LivenessMode } from '../shared/auth/liveness.js';
import { countRequests, invokeHandler, type Counted } from '../test/support/request-count.js';
import { benchClient } from './http-client.js';
import { apiPost, benchInstallation } from './installation.js';
import { formatRow, measure, measureInTurns, type Measurement } from './measure.js';
import { threadBody } from './requests.js';

/** As the request rows: each side's time cut into this many windows at c>1, call by call at c=1. */
const ROUNDS = 10;

/**
 * Issue 28 item 4: what the exchange-token liveness check (`shared/auth/liveness.ts`) costs. Each
 * row is an exchange-token request through the local gateway with the check as deployed (carried
 * by the request's read of its markup: one consistent BatchGetItem of the markup, the installation
 * and the external user instead of a GetItem of the markup) and the same request with the check
 * switched off through the bench's seam (`setLivenessModeForBench`, refused outside the local
 * stack), measured in turns; then the same against the design not taken, a BatchGetItem of its own
 * started at authentication beside the request's reads (`parallel`). Before measuring, the bench
 * checks that the deployed check adds no DynamoDB call (the markup's GetItem becomes a
 * BatchGetItem) and the other exactly one.
 */
export async function benchLiveness(stack: StackInfo, options: { durationMs: number; concurrency: number }): Promise<Measurement[]> {
  const post = apiPost(stack);
  // A real installation and a real exchange: the token stands for records that exist.
  const installation = await benchInstallation(stack);
  const jwt = () => installation.sign({ sub: 'bench-liveness-user', name: 'Bench liveness user', markupRole: 'project:contributor' }, '5m');
  const exchangeToken = async () => (await post('/auth/exchange', { token: await jwt() })).exchangeToken as string;
  let token = await exchangeToken();

  // The list: one markup with 50 threads of two messages. Replies: a pool of markups with one thread
  // each, taken in turn so that concurrent replies do not collide on one markup's transaction.
  const listMarkupId = (await post('/markups/url', { url: 'https://example.com/liveness-list' }, stack.workspaceApiKey)).id as string;
  for (let i = 0; i < 50; i += 1) {
    const thread = await post('/threads', threadBody(listMarkupId), token);
    await post(`/threads/${thread.id}/messages`, { content: `Reply ${i}` }, token);
  }
  const replyThreads: string[] = [];
  for (let i = 0; i < 32; i += 1) {
    const markupId = (await post('/markups/url', { url: `https://example.com/liveness-replies-${i}` }, stack.workspaceApiKey)).id as string;
    replyThreads.push((await post('/threads', threadBody(markupId), token)).id as string);
  }
  let nextReply = 0;
  const replyBody = { content: 'A bench reply' };

  const client = benchClient(stack.baseUrl, {});
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await client.call(method, `/api/v2${path}`, body, {
      'Service-API-Version': '2023-02-22',
      Authorization: `Bearer ${token}`,
    });
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${response.body}`);
  };
  const scenarios = [
    { name: 'GET /threads (page of 50), exchange token', request: () => send('GET', `/threads?markupId=${listMarkupId}&limit=50`) },
    {
      name: 'POST /threads/:id/messages, exchange token',
      request: () => send('POST', `/threads/${replyThreads[nextReply++ % replyThreads.length]!}/messages`, replyBody),
    },
  ];

  // The check adds one call, a BatchGetItem, and nothing else (handlers invoked in this process).
  const threads = { name: 'threads', routes: threadsRoutes, handler: threadsHandler };
  const messages = { name: 'messages', routes: messagesRoutes, handler: messagesHandler };
  await requireCallsOfCheck('GET /threads', () =>
    invokeHandler(threads, 'GET', '/threads', { key: token, query: { markupId: listMarkupId, limit: 50 } }),
  );
  await requireCallsOfCheck('POST /threads/:id/messages', () =>
    invokeHandler(messages, 'POST', `/threads/${replyThreads[0]!}/messages`, { key: token, body: replyBody }),
  );

  const results: Measurement[] = [];
  try {
    for (const [compared, label] of [
      ['off', 'without the check'],
      ['parallel', 'check by a read of its own (not used)'],
    ] as const) {
      for (const scenario of scenarios) {
        const side = (mode: LivenessMode) => async () => {
          setLivenessModeForBench(mode);
          await scenario.request();
        };
        setLivenessModeForBench('fold');
        await measure('warm-up', scenario.request, {
          durationMs: Math.min(options.durationMs, 2000),
          concurrency: options.concurrency,
          warmup: 0,
        });
        for (const concurrency of [1, options.concurrency]) {
          // Tokens live 5 minutes: a fresh one for each measurement.
          token = await exchangeToken();
          const [other, checked] = await measureInTurns(
            [
              { name: `${scenario.name}, ${label} (c=${concurrency})`, operation: side(compared) },
              { name: `${scenario.name} (c=${concurrency})`, operation: side('fold') },
            ],
            { durationMs: options.durationMs, concurrency, rounds: ROUNDS },
          );
          results.push(other, checked);
          const [base, measured] = compared === 'off' ? [other, checked] : [checked, other];
          process.stdout.write(`${formatRow(other)}\n${formatRow(checked)}\n`);
          process.stdout.write(
            `${`  ${compared === 'off' ? 'with the check / without' : 'read of its own / as deployed'}`.padEnd(44)} p50 ${(measured.p50 / base.p50).toFixed(2)}x   p99 ${(measured.p99 / base.p99).toFixed(2)}x   throughput ${(base.perSecond / measured.perSecond).toFixed(2)}x\n\n`,
          );
        }
      }
    }
  } finally {
    setLivenessModeForBench('fold');
    client.close();
  }
  return results;
}

/**
 * Fails the bench unless the deployed check makes the request's calls without it, its markup's
 * GetItem made a BatchGetItem, and the check by a read of its own exactly one BatchGetItem more.
 */
async function requireCallsOfCheck(name: string, request: () => Promise<{ status: number; body: unknown }>): Promise<void> {
  const counted = async (mode: LivenessMode) => {
    setLivenessModeForBench(mode);
    try {
      const result = await countRequests(request);
      if (result.result.status !== 200) throw new Error(`${name} answered ${result.result.status}: ${JSON.stringify(result.result.body)}`);
      return result;
    } finally {
      setLivenessModeForBench('fold');
    }
  };
  // Once first, as a warm handler: the first list of a process reads (or makes) the cursor key.
  await request();
  const [without, deployed, ownRead] = [await counted('off'), await counted('fold'), await counted('parallel')];
  const added = (a: Counted<unknown>, b: Counted<unknown>) =>
    JSON.stringify(
      Object.fromEntries(
        Object.keys({ ...a.counts, ...b.counts })
          .sort()
          .map((command) => [command, (b.counts[command] ?? 0) - (a.counts[command] ?? 0)])
          .filter(([, n]) => n !== 0),
      ),
    );
  if (added(without, deployed) !== JSON.stringify({ BatchGetItemCommand: 1, GetItemCommand: -1 })) {
    throw new Error(`The liveness check of ${name} changes the calls by ${added(without, deployed)}, not a GetItem made a BatchGetItem.`);
  }
  if (added(without, ownRead) !== JSON.stringify({ BatchGetItemCommand: 1 }))
    throw new Error(`A liveness read of its own for ${name} adds ${added(without, ownRead)}, not one BatchGetItem.`);
  process.stdout.write(
    `${name} with an exchange token: ${without.total} DynamoDB calls without the check, ${deployed.total} with it (the markup's GetItem a BatchGetItem), ${ownRead.total} with a read of its own\n`,
  );
}
