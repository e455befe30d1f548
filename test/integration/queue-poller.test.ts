import { randomUUID } from 'node:crypto';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { afterAll, describe, expect, it } from 'vitest';
import { createQueuePair, startPoller, wakeOnArrival, type Poller } from '../../infra/local/sqs.js';
import { startSqsFront } from '../../infra/local/sqs-front.js';
import { queueNameOf } from '../../infra/local/sqs-requests.js';
import { createQueueWorker, defineJob } from '../../shared/events/queue-worker.js';
import { localStack } from '../support/api.js';

const { services } = localStack();
const sqs = new SQSClient({ region: services.region, endpoint: services.endpoints.sqs, credentials: services.credentials });
const pollers: Poller[] = [];

afterAll(async () => {
  await Promise.all(pollers.map((poller) => poller.stop()));
  sqs.destroy();
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function visibleCount(url: string): Promise<number> {
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(attributes.Attributes?.ApproximateNumberOfMessages ?? 0) +
    Number(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

describe('the local event source mapping (batchItemFailures, visibility timeout, dead-letter queue)', () => {
  it('deletes processed records, retries only the failed ones after the visibility timeout, then dead-letters them', async () => {
    const queue = await createQueuePair(sqs, `poller-${randomUUID().slice(0, 8)}`, { visibilityTimeoutSeconds: 1, maxReceiveCount: 2 });
    const attempts = new Map<string, number>();
    const worker = createQueueWorker('test', {
      echo: defineJob({
        schema: v.object({ type: v.literal('echo'), id: v.string(), fail: v.boolean() }),
        run: async (job) => {
          attempts.set(job.id, (attempts.get(job.id) ?? 0) + 1);
          if (job.fail) throw new Error(`job ${job.id} fails`);
        },
      }),
    });
    const messages = [
      { id: 'ok-1', fail: false },
      { id: 'bad-1', fail: true },
      { id: 'ok-2', fail: false },
    ];

    pollers.push(startPoller(sqs, queue, worker, { batchSize: 10, region: services.region }));
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: [
          ...messages.map((m, i) => ({ Id: String(i), MessageBody: JSON.stringify({ type: 'echo', ...m }) })),
          { Id: 'poison', MessageBody: 'not json' },
        ],
      }),
    );
    const deadLetters = await until(
      async () =>
        (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.deadLetterUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30 })))
          .Messages ?? [],
      (found) => found.length >= 2,
    );

    expect(deadLetters.map((m) => m.Body).sort()).toEqual(['not json', JSON.stringify({ type: 'echo', id: 'bad-1', fail: true })]);
    expect(attempts.get('ok-1')).toBe(1);
    expect(attempts.get('ok-2')).toBe(1);
    expect(attempts.get('bad-1')).toBe(2);
    expect(await visibleCount(queue.url)).toBe(0);
  });

  it('retries the whole batch when the handler itself throws', async () => {
    const queue = await createQueuePair(sqs, `poller-${randomUUID().slice(0, 8)}`, { visibilityTimeoutSeconds: 1, maxReceiveCount: 5 });
    let calls = 0;

    pollers.push(
      startPoller(
        sqs,
        queue,
        async () => {
          calls += 1;
          if (calls === 1) throw new Error('crash');
          return { batchItemFailures: [] };
        },
        { batchSize: 10, region: services.region },
      ),
    );
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: queue.url, Entries: [{ Id: 'a', MessageBody: '{}' }] }));
    const remaining = await until(
      () => visibleCount(queue.url),
      (count) => count === 0 && calls >= 2,
    );

    expect(calls).toBe(2);
    expect(remaining).toBe(0);
  });

  it('starts a job as soon as the front has answered its send, and a delayed one once its delay is over, though idle loops sleep a minute', async () => {
    const queue = await createQueuePair(sqs, `poller-${randomUUID().slice(0, 8)}`, { visibilityTimeoutSeconds: 30, maxReceiveCount: 5 });
    const handledAt = new Map<string, number>();
    const worker = createQueueWorker('test', {
      echo: defineJob({
        schema: v.object({ type: v.literal('echo'), id: v.string() }),
        run: async (job) => {
          handledAt.set(job.id, Date.now());
        },
      }),
    });
    const pollersByQueue = new Map<string, Poller>();
    const front = await startSqsFront(services.endpoints.sqs, { onArrival: wakeOnArrival(pollersByQueue) });
    const viaFront = new SQSClient({ region: services.region, endpoint: front.url, credentials: services.credentials });
    try {
      // A loop whose receive finds nothing sleeps a minute unless the front wakes it.
      const poller = startPoller(sqs, queue, worker, { batchSize: 10, region: services.region, idleMs: 60_000 });
      pollers.push(poller);
      pollersByQueue.set(queueNameOf(queue.url)!, poller);
      const send = async (id: string, delaySeconds = 0) => {
        await viaFront.send(
          new SendMessageCommand({ QueueUrl: queue.url, MessageBody: JSON.stringify({ type: 'echo', id }), DelaySeconds: delaySeconds }),
        );
        return Date.now();
      };
      // After the first job the loop receives again, finds nothing and sleeps.
      await send('first');
      await until(
        async () => handledAt.has('first'),
        (handled) => handled,
        20_000,
      );
      const nowSentAt = await send('now');
      await until(
        async () => handledAt.has('now'),
        (handled) => handled,
        20_000,
      );
      const laterSentAt = await send('later', 2);
      await until(
        async () => handledAt.has('later'),
        (handled) => handled,
        20_000,
      );

      // Without the wake each would wait for the loop's minute of sleep.
      expect(handledAt.get('now')! - nowSentAt).toBeLessThan(15_000);
      expect(handledAt.get('later')! - laterSentAt).toBeGreaterThanOrEqual(1_900);
      expect(handledAt.get('later')! - laterSentAt).toBeLessThan(15_000);
    } finally {
      viaFront.destroy();
      await front.close();
    }
  }, 60_000);
});
