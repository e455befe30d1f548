import WebSocket from 'ws';
import type { StackInfo } from '../infra/local/stack.js';
import type { Request } from '../web/board/transport.js';
import { LiveClient, type LiveState, type SocketFactory } from '../web/live/client.js';
import { benchClient } from './http-client.js';
import { threadBody } from './requests.js';

const percentile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const VERSION = '2023-02-22';
/** Issue 32: from the write's answer to a subscriber's receipt. */
const TARGET_P50_MS = 150;
const TARGET_P99_MS = 500;
/** The write with subscribers within 1.1x of the same write on a markup nobody follows. */
const TARGET_WRITE_RATIO = 1.1;
/** Subscribers connected at once while they are set up. */
const CONNECTING_AT_ONCE = 16;

/**
 * Issue 32's row: live-update latency on the local stack, from the moment `POST /threads` answered
 * to the moment a subscriber's socket handed over its `comment_created` event (outbox item with its
 * seq -> stream pump -> fan-out -> the gateway's socket -> the client). The subscribers are
 * web/live's own client (the one the review app and the embed client run) on the `ws` package, in
 * this process, once 1 and once 500 on one markup; every receipt counts (n = writes x subscribers).
 * Writes run one at a time, each waiting for all its receipts, so a row measures latency, not
 * queueing behind earlier events. Beside it, the write's own latency against a same-run floor: the
 * same write on a markup nobody follows, taken in turns with it (A B B A …).
 *
 * The stack, the 500 clients and the bench share one Node process and its event loop: the time a
 * client spends parsing its message is charged to the others' receipts, as it would not be with
 * browsers on other machines.
 */
export async function benchLive(stack: StackInfo, options: { runs: number; sizes: readonly number[] }): Promise<void> {
  const http = benchClient(stack.baseUrl, {
    'service-api-version': VERSION,
    authorization: `Bearer ${stack.organizationApiKey}`,
    accept: 'application/json',
  });
  const request = (async (path: string, init: { method?: string; body?: unknown } = {}) => {
    const response = await http.call(init.method ?? 'GET', `/api/v2${path}`, init.body);
    if (response.status >= 300)
      throw Object.assign(new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${response.body}`), {
        status: response.status,
      });
    return response.body ? (JSON.parse(response.body) as { data: unknown }).data : undefined;
  }) as Request;
  const post = (path: string, body: unknown) => request<{ id: string }>(path, { method: 'POST', body });

  // A workspace of its own; one markup followed, one nobody follows (the write's floor).
  const workspaceId = (await post('/workspace', { name: 'Live update bench' })).id;
  const followed = await post('/markups/url', { url: 'https://example.com/live-bench', workspaceId });
  const floor = await post('/markups/url', { url: 'https://example.com/live-bench-floor', workspaceId });

  const clients: LiveClient[] = [];
  /** Per thread id: when each subscriber got its comment_created. */
  const receipts = new Map<string, number[]>();
  let notify: (() => void) | undefined;
  const addSubscriber = async () => {
    const live = new LiveClient(request, { WebSocket: WebSocket as unknown as SocketFactory });
    clients.push(live);
    const isLive = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`a subscriber was not live within 30 s (state ${live.state})`)), 30_000);
      const stop = live.onState((state: LiveState) => {
        if (state !== 'live') return;
        clearTimeout(timer);
        stop();
        resolve();
      });
    });
    live.subscribe(followed.id, {
      onEvent: (event) => {
        if (event.type !== 'comment_created' || !event.data.comment) return;
        const at = performance.now();
        const list = receipts.get(event.data.comment.id) ?? [];
        list.push(at);
        receipts.set(event.data.comment.id, list);
        notify?.();
      },
      onRefused: (status, detail) => process.stderr.write(`live bench: subscription refused (${status}): ${detail}\n`),
    });
    await isLive;
  };
  const waitForReceipts = async (threadId: string, count: number) => {
    const deadline = performance.now() + 30_000;
    while ((receipts.get(threadId)?.length ?? 0) < count) {
      if (performance.now() > deadline)
        throw new Error(`only ${receipts.get(threadId)?.length ?? 0} of ${count} subscribers got the event within 30 s`);
      await new Promise<void>((resolve) => {
        notify = resolve;
        setTimeout(resolve, 200);
      });
    }
  };
  const write = async (markupId: string) => {
    const started = performance.now();
    const thread = await post('/threads', threadBody(markupId));
    const answered = performance.now();
    return { threadId: thread.id, answered, took: answered - started };
  };

  try {
    for (const size of options.sizes) {
      while (clients.length < size)
        await Promise.all(Array.from({ length: Math.min(CONNECTING_AT_ONCE, size - clients.length) }, addSubscriber));
      // Warm-up: the paths compiled, the sockets' buffers grown.
      for (let run = 0; run < 3; run += 1) {
        const warm = await write(followed.id);
        await waitForReceipts(warm.threadId, size);
      }
      const latencies: number[] = [];
      const lastOf: number[] = [];
      const writes: number[] = [];
      const floors: number[] = [];
      for (let run = 0; run < options.runs; run += 1) {
        for (const side of run % 2 === 0 ? (['followed', 'floor'] as const) : (['floor', 'followed'] as const)) {
          if (side === 'floor') {
            floors.push((await write(floor.id)).took);
            continue;
          }
          const done = await write(followed.id);
          writes.push(done.took);
          await waitForReceipts(done.threadId, size);
          // An event can beat the answer to the client: no negative latencies.
          const times = receipts.get(done.threadId)!.map((at) => Math.max(0, at - done.answered));
          latencies.push(...times);
          lastOf.push(Math.max(...times));
          receipts.delete(done.threadId);
        }
      }
      const p50 = percentile(latencies, 0.5);
      const p99 = percentile(latencies, 0.99);
      const verdict = p50 < TARGET_P50_MS && p99 < TARGET_P99_MS ? 'ok' : 'OVER TARGET';
      const name = `write -> receipt, ${size} subscriber${size === 1 ? '' : 's'}`;
      process.stdout.write(
        `${name.padEnd(44)} p50 ${p50.toFixed(1).padStart(7)} ms   p99 ${p99.toFixed(1).padStart(7)} ms   (n=${latencies.length}; the last of ${size}: p50 ${percentile(lastOf, 0.5).toFixed(1)} ms, p99 ${percentile(lastOf, 0.99).toFixed(1)} ms)   ${verdict}\n`,
      );
      const [writeP50, floorP50] = [percentile(writes, 0.5), percentile(floors, 0.5)];
      const ratio = writeP50 / floorP50;
      process.stdout.write(
        `${`POST /threads, ${size} subscriber${size === 1 ? '' : 's'} / floor`.padEnd(44)} p50 ${writeP50.toFixed(1).padStart(7)} ms / ${floorP50.toFixed(1)} ms (${ratio.toFixed(2)}x)   p99 ${percentile(writes, 0.99).toFixed(1)} / ${percentile(floors, 0.99).toFixed(1)} ms   (n=${writes.length})   ${ratio <= TARGET_WRITE_RATIO ? 'ok' : 'OVER TARGET'}\n`,
      );
    }
  } finally {
    for (const live of clients) live.close();
  }
}
