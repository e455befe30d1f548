import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StackInfo } from '../infra/local/stack.js';
import { apiPost } from './installation.js';
import { threadBody } from './requests.js';

const percentile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

/**
 * Issue 12's row: event-to-delivery latency on the local stack, from the moment `POST /threads`
 * answered to the moment a loopback receiver got the signed `comment_created` delivery (outbox
 * item -> stream pump -> fan-out -> delivery queue -> worker -> receiver). Once with one
 * registration, once with ten on the same workspace (time until the last of the ten arrived), to
 * show how the cost grows with the number of registrations. Operations run one at a time, each
 * waiting for its deliveries, so a row measures latency, not queueing behind earlier events.
 */
export async function benchWebhooks(stack: StackInfo, options: { runs: number }): Promise<void> {
  const arrivals: { at: number; webhookId: string }[] = [];
  let notify: (() => void) | undefined;
  const server = createServer((request: IncomingMessage, response) => {
    request.resume();
    request.on('end', () => {
      arrivals.push({ at: performance.now(), webhookId: String(request.headers['webhook-id']) });
      notify?.();
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const post = apiPost(stack);
  const waitForArrivals = async (count: number) => {
    const deadline = performance.now() + 30_000;
    while (arrivals.length < count) {
      if (performance.now() > deadline) throw new Error(`only ${arrivals.length} of ${count} deliveries arrived within 30 s`);
      await new Promise<void>((resolve) => {
        notify = resolve;
        setTimeout(resolve, 200);
      });
    }
  };

  try {
    // A workspace of its own: no other bench's events reach these registrations.
    const workspaceId: string = (await post('/workspace', { name: 'Webhook bench' }, stack.organizationApiKey)).id;
    const markup = await post('/markups/url', { url: 'https://example.com/webhook-bench', workspaceId }, stack.organizationApiKey);
    const registrations: string[] = [];
    for (const size of [1, 10]) {
      while (registrations.length < size) {
        registrations.push(
          (
            await post(
              '/webhook-registrations',
              { url, workspaceId, eventTypes: ['comment_created'], enabled: true },
              stack.organizationApiKey,
            )
          ).id,
        );
      }
      const latencies: number[] = [];
      for (let run = 0; run < options.runs; run += 1) {
        arrivals.length = 0;
        await post('/threads', threadBody(markup.id), stack.organizationApiKey);
        const answered = performance.now();
        await waitForArrivals(size);
        if (new Set(arrivals.map((arrival) => arrival.webhookId)).size !== 1)
          throw new Error('one event arrived under several webhook-ids');
        latencies.push(Math.max(...arrivals.map((arrival) => arrival.at)) - answered);
      }
      const name = `event -> delivery, ${size} registration${size === 1 ? '' : 's'}`;
      process.stdout.write(
        `${name.padEnd(44)} p50 ${percentile(latencies, 0.5).toFixed(1).padStart(7)} ms   p99 ${percentile(latencies, 0.99).toFixed(1).padStart(7)} ms   (n=${latencies.length})\n`,
      );
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}
