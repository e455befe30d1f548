import WebSocket from 'ws';
import type { StackInfo } from '../infra/local/stack.js';
import { threadBody } from './requests.js';

const percentile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

const WARM_UP_WRITES = 5;

interface Subscriber {
  socket: WebSocket;
  /** When each thread's comment_created arrived (performance.now()), by thread id. */
  arrivals: Map<string, number>;
}

/**
 * Issue 32's row: from the moment `POST /threads` answered to the moment a live subscriber of the
 * markup received its `comment_created` (outbox item -> stream pump -> live fan-out -> socket),
 * with 1 and with 500 subscribers on one markup; every subscriber's receipt counts. Operations run
 * one at a time, each waiting for every subscriber, so a row measures latency, not queueing; the
 * write's own latency (the answer of POST /threads) is shown beside it.
 */
export async function benchLive(stack: StackInfo, options: { runs: number; sizes?: number[] }): Promise<void> {
  const headers = { 'Service-API-Version': '2023-02-22', 'Content-Type': 'application/json' };
  const post = async (path: string, body: unknown, key: string): Promise<any> => {
    const response = await fetch(`${stack.baseUrl}/api/v2${path}`, { method: 'POST', headers: { ...headers, Authorization: `Bearer ${key}` }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { data: unknown }).data;
  };
  const subscribers: Subscriber[] = [];
  let notify: (() => void) | undefined;
  const subscribe = async (markupId: string): Promise<Subscriber> => {
    const { url } = (await post('/live/tickets', undefined, stack.workspaceApiKey)) as { url: string };
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const subscriber: Subscriber = { socket, arrivals: new Map() };
    const subscribed = new Promise<void>((resolve) => {
      socket.on('message', (data) => {
        const message = JSON.parse(data.toString()) as { type: string; seq: number; event?: { type: string; data: { comment?: { id: string } } } };
        if (message.type === 'subscribed') resolve();
        if (message.type === 'event' && message.event?.type === 'comment_created' && message.event.data.comment) {
          subscriber.arrivals.set(message.event.data.comment.id, performance.now());
          notify?.();
        }
      });
    });
    socket.send(JSON.stringify({ type: 'subscribe', markupId }));
    await subscribed;
    return subscriber;
  };
  const waitForAll = async (threadId: string) => {
    const deadline = performance.now() + 30_000;
    while (subscribers.some((subscriber) => !subscriber.arrivals.has(threadId))) {
      if (performance.now() > deadline) throw new Error(`thread ${threadId} reached ${subscribers.filter((s) => s.arrivals.has(threadId)).length} of ${subscribers.length} subscribers within 30 s`);
      await new Promise<void>((resolve) => {
        notify = resolve;
        setTimeout(resolve, 200);
      });
    }
  };

  try {
    const markup = await post('/markups/url', { url: 'https://example.com/live-bench', workspaceId: stack.workspaceId }, stack.workspaceApiKey);
    for (const size of options.sizes ?? [1, 500]) {
      while (subscribers.length < size) {
        const batch = Array.from({ length: Math.min(50, size - subscribers.length) }, () => subscribe(markup.id));
        subscribers.push(...(await Promise.all(batch)));
      }
      const receipts: number[] = [];
      const lasts: number[] = [];
      const writes: number[] = [];
      // Unmeasured first writes: cold paths, and the markup's own page thumbnail rendering meanwhile.
      for (let run = 0; run < WARM_UP_WRITES; run += 1) await waitForAll(((await post('/threads', threadBody(markup.id), stack.workspaceApiKey)) as { id: string }).id);
      for (let run = 0; run < options.runs; run += 1) {
        const sent = performance.now();
        const thread = (await post('/threads', threadBody(markup.id), stack.workspaceApiKey)) as { id: string };
        const answered = performance.now();
        writes.push(answered - sent);
        await waitForAll(thread.id);
        const times = subscribers.map((subscriber) => subscriber.arrivals.get(thread.id)! - answered);
        receipts.push(...times);
        lasts.push(Math.max(...times));
      }
      const name = `write -> live receipt, ${size} subscriber${size === 1 ? '' : 's'}`;
      process.stdout.write(
        `${name.padEnd(44)} p50 ${percentile(receipts, 0.5).toFixed(1).padStart(7)} ms   p99 ${percentile(receipts, 0.99).toFixed(1).padStart(7)} ms   ` +
          `(last subscriber p50 ${percentile(lasts, 0.5).toFixed(1)} ms; the write itself p50 ${percentile(writes, 0.5).toFixed(1)} ms; n=${options.runs} writes)\n`,
      );
    }
  } finally {
    for (const subscriber of subscribers) subscriber.socket.close();
  }
}
