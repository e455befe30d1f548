import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { createQueuePair, startSqs, type LocalSqs, type QueuePair } from '../../infra/local/sqs.js';
import { eventually } from '../support/polling.js';

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };
const dirs: string[] = [];
const started: { sqs: LocalSqs; client: SQSClient }[] = [];

afterAll(async () => {
  for (const { sqs, client } of started) {
    client.destroy();
    await sqs.stop().catch(() => undefined);
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** local-aws-sqs as the local stack starts it (journaled in `journalFile`, or in memory), with a queue pair as the stack makes them. */
async function queues(journalFile?: string) {
  const sqs = await startSqs(REGION, journalFile ? { journalFile } : {});
  const client = new SQSClient({ region: REGION, endpoint: sqs.endpoint, credentials: CREDENTIALS });
  started.push({ sqs, client });
  // One receive before the dead-letter queue, a 1 s visibility timeout: a failed message is dead-lettered a second after its receive.
  const pair = await createQueuePair(client, 'Work', { visibilityTimeoutSeconds: 1, maxReceiveCount: 2 });
  return { sqs, client, pair };
}

/** One short-poll receive; `holdSeconds` overrides the queue's 1 s visibility timeout. */
const receive = async (client: SQSClient, url: string, holdSeconds?: number): Promise<Message[]> =>
  (
    await client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        AttributeNames: ['All'],
        MessageAttributeNames: ['All'],
        ...(holdSeconds ? { VisibilityTimeout: holdSeconds } : {}),
      }),
    )
  ).Messages ?? [];

const depth = async (client: SQSClient, url: string) => {
  const { Attributes = {} } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed),
  };
};

const send = async (client: SQSClient, pair: QueuePair, body: string, delaySeconds?: number) =>
  (
    await client.send(
      new SendMessageCommand({
        QueueUrl: pair.url,
        MessageBody: body,
        MessageAttributes: { kind: { DataType: 'String', StringValue: body } },
        ...(delaySeconds ? { DelaySeconds: delaySeconds } : {}),
      }),
    )
  ).MessageId!;

describe('the local SQS emulator keeps its queues across a restart (DESIGN.md: the local stack keeps its work)', () => {
  it('gives a queue created again on the same journal every message it held: waiting, delayed, in flight (at once, receive count kept), dead-lettered (still in the dead-letter queue); deleted ones stay gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqs-journal-'));
    dirs.push(dir);
    const journalFile = join(dir, 'sqs-journal.jsonl');
    const first = await queues(journalFile);

    // Twice received and never deleted: the emulator moves it to the dead-letter queue once its visibility ends.
    const dead = await send(first.client, first.pair, 'dead');
    await eventually(
      async () => receive(first.client, first.pair.url),
      (messages) => messages.length > 0,
      5_000,
    );
    await eventually(
      async () => receive(first.client, first.pair.url),
      (messages) => messages.length > 0,
      5_000,
    );
    await eventually(
      async () => depth(first.client, first.pair.deadLetterUrl),
      (queue) => queue.visible === 1,
      5_000,
    );
    const inFlight = await send(first.client, first.pair, 'in-flight');
    const done = await send(first.client, first.pair, 'done');
    const waiting = await send(first.client, first.pair, 'waiting');
    const delayed = await send(first.client, first.pair, 'delayed', 3);
    const sentDelayedAt = Date.now();
    // The first two: one is handled and deleted, the other is still held (for a minute) when the emulator stops.
    const held =
      (
        await first.client.send(
          new ReceiveMessageCommand({ QueueUrl: first.pair.url, MaxNumberOfMessages: 2, VisibilityTimeout: 60, WaitTimeSeconds: 0 }),
        )
      ).Messages ?? [];
    await first.client.send(
      new DeleteMessageCommand({
        QueueUrl: first.pair.url,
        ReceiptHandle: held.find((message) => message.MessageId === done)!.ReceiptHandle!,
      }),
    );
    first.client.destroy();
    await first.sqs.stop();
    // A kill mid-write leaves a torn last line: its request was never answered, and it is skipped.
    appendFileSync(journalFile, '{"op":"put","id":"torn');

    const second = await queues(journalFile);
    const afterRestart = await depth(second.client, second.pair.url);
    const dlq = await receive(second.client, second.pair.deadLetterUrl, 60);
    const now = await receive(second.client, second.pair.url, 60);
    const later = await eventually(
      async () => receive(second.client, second.pair.url, 60),
      (messages) => messages.length > 0,
      10_000,
    );
    const delayedAfterMs = Date.now() - sentDelayedAt;

    expect(held.map((message) => message.MessageId)).toEqual([inFlight, done]);
    expect(afterRestart).toEqual({ visible: 2, inFlight: 0, delayed: 1 });
    expect(dlq.map((message) => [message.MessageId, message.Body])).toEqual([[dead, 'dead']]);
    expect(dlq[0]!.Attributes?.DeadLetterQueueSourceArn).toBe(first.pair.arn);
    expect(now.map((message) => message.MessageId).sort()).toEqual([waiting, inFlight].sort());
    const byId = new Map(now.map((message) => [message.MessageId, message]));
    // Received once before the stop, and now once more; the waiting one for the first time.
    expect(byId.get(inFlight)!.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(byId.get(waiting)!.Attributes?.ApproximateReceiveCount).toBe('1');
    expect(byId.get(waiting)!.MessageAttributes?.kind?.StringValue).toBe('waiting');
    expect(later.map((message) => message.Body)).toEqual(['delayed']);
    expect(delayedAfterMs).toBeGreaterThanOrEqual(2_500);
    expect([waiting, inFlight, dead, delayed]).not.toContain(done);
  }, 60_000);

  it('keeps a redriven dead letter where the move task put it, and only there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqs-journal-'));
    dirs.push(dir);
    const journalFile = join(dir, 'sqs-journal.jsonl');
    const first = await queues(journalFile);
    await send(first.client, first.pair, 'redriven');
    await eventually(
      async () => receive(first.client, first.pair.url),
      (messages) => messages.length > 0,
      5_000,
    );
    await eventually(
      async () => receive(first.client, first.pair.url),
      (messages) => messages.length > 0,
      5_000,
    );
    await eventually(
      async () => depth(first.client, first.pair.deadLetterUrl),
      (queue) => queue.visible === 1,
      5_000,
    );

    await first.client.send(new StartMessageMoveTaskCommand({ SourceArn: first.pair.deadLetterArn }));
    const moved = await eventually(
      async () => depth(first.client, first.pair.url),
      (queue) => queue.visible === 1,
      10_000,
    );
    first.client.destroy();
    await first.sqs.stop();
    const second = await queues(journalFile);

    expect(moved.visible).toBe(1);
    expect(await depth(second.client, second.pair.deadLetterUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect((await receive(second.client, second.pair.url, 60)).map((message) => message.Body)).toEqual(['redriven']);
  }, 60_000);

  it('keeps nothing without a journal (MEMORY=1)', async () => {
    const first = await queues();
    await send(first.client, first.pair, 'lost');
    first.client.destroy();
    await first.sqs.stop();

    const second = await queues();

    expect(await depth(second.client, second.pair.url)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });
});
