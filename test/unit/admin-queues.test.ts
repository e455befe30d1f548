import type { ListMessageMoveTasksResultEntry, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { findMoveTask, queueChain, queueOption, queueUrlOf, redrive, type QueueChain } from '../../infra/admin/queues.js';
import { UsageError } from '../../infra/admin/usage-error.js';
import { parseConfig } from '../../shared/config.js';

type Sent = { command: string; input: Record<string, unknown> };

/** An SQS client that answers each command from `answers` by its name, in turn, and records what it was sent. */
function fakeSqs(answers: Record<string, ((input: Record<string, unknown>) => unknown)[]>) {
  const sent: Sent[] = [];
  const sqs = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const name = command.constructor.name.replace(/Command$/, '');
      sent.push({ command: name, input: command.input });
      const answer = answers[name]?.shift();
      if (!answer) throw new Error(`unexpected ${name}`);
      return answer(command.input);
    },
  } as unknown as Pick<SQSClient, 'send'>;
  return { sqs, sent };
}

const arn = (name: string) => `arn:aws:sqs:eu-west-1:123456789012:${name}`;
const url = (name: string) => `https://sqs.eu-west-1.amazonaws.com/123456789012/${name}`;
const chain = (hold: boolean): QueueChain => ({
  queue: { url: url('Conversion'), arn: arn('Conversion') },
  deadLetterQueue: { url: url('ConversionDlq'), arn: arn('ConversionDlq') },
  ...(hold ? { deadLetterHold: { url: url('ConversionHold'), arn: arn('ConversionHold') } } : {}),
});
const task = (overrides: ListMessageMoveTasksResultEntry): ListMessageMoveTasksResultEntry => ({
  SourceArn: arn('ConversionHold'),
  DestinationArn: arn('Conversion'),
  StartedTimestamp: 1_000_000,
  ApproximateNumberOfMessagesMoved: 0,
  ...overrides,
});
/** A clock that moves on by each sleep, so a deadline passes without waiting for it. */
function fakeClock() {
  let now = 1_000_000;
  return { now: () => now, sleep: async (ms: number) => void (now += ms) };
}

describe('queue --queue names (docs/local-stack.md, "Admin CLI")', () => {
  it('maps uploads, conversion, webhooks and thumbnails to their queues', () => {
    expect(queueOption('uploads')).toEqual({ option: 'uploads', name: 'uploads' });
    expect(queueOption('conversion')).toEqual({ option: 'conversion', name: 'conversion' });
    expect(queueOption('webhooks')).toEqual({ option: 'webhooks', name: 'webhookDelivery' });
    expect(queueOption('thumbnails')).toEqual({ option: 'thumbnails', name: 'thumbnails' });
  });

  it('refuses a missing or unknown name with a usage error listing the names', () => {
    expect(() => queueOption(undefined)).toThrow('--queue takes one of uploads, conversion, webhooks, thumbnails');
    expect(() => queueOption(true)).toThrow(UsageError);
    expect(() => queueOption('webhookDelivery')).toThrow(UsageError);
    expect(() => queueOption('toString')).toThrow(UsageError);
  });

  it('finds each queue URL in the configuration, and none where its variable is not set', () => {
    const config = parseConfig({ CONVERSION_QUEUE_URL: url('Conversion'), WEBHOOK_QUEUE_URL: url('Webhooks') });

    expect(queueUrlOf(config, 'conversion')).toBe(url('Conversion'));
    expect(queueUrlOf(config, 'webhookDelivery')).toBe(url('Webhooks'));
    expect(queueUrlOf(config, 'thumbnails')).toBeUndefined();
  });
});

describe('queueChain: the dead-letter queue and hold queue come from the redrive policies', () => {
  it('follows the queue to its dead-letter queue and that to its hold queue', async () => {
    const redrivePolicy = (target: string) => JSON.stringify({ deadLetterTargetArn: arn(target), maxReceiveCount: 3 });
    const { sqs, sent } = fakeSqs({
      GetQueueAttributes: [
        () => ({ Attributes: { QueueArn: arn('Conversion'), RedrivePolicy: redrivePolicy('ConversionDlq') } }),
        () => ({ Attributes: { QueueArn: arn('ConversionDlq'), RedrivePolicy: redrivePolicy('ConversionHold') } }),
      ],
      GetQueueUrl: [(input) => ({ QueueUrl: url(String(input.QueueName)) }), (input) => ({ QueueUrl: url(String(input.QueueName)) })],
    });

    const found = await queueChain(sqs, url('Conversion'));

    expect(found).toEqual(chain(true));
    expect(sent.filter((call) => call.command === 'GetQueueUrl').map((call) => call.input)).toEqual([
      { QueueName: 'ConversionDlq', QueueOwnerAWSAccountId: '123456789012' },
      { QueueName: 'ConversionHold', QueueOwnerAWSAccountId: '123456789012' },
    ]);
  });

  it('has no hold queue when the dead-letter queue has no redrive policy', async () => {
    const { sqs } = fakeSqs({
      GetQueueAttributes: [
        () => ({
          Attributes: {
            QueueArn: arn('Conversion'),
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('ConversionDlq'), maxReceiveCount: 3 }),
          },
        }),
        () => ({ Attributes: { QueueArn: arn('ConversionDlq') } }),
      ],
      GetQueueUrl: [() => ({ QueueUrl: url('ConversionDlq') })],
    });

    expect(await queueChain(sqs, url('Conversion'))).toEqual(chain(false));
  });

  it('refuses a queue without a dead-letter queue', async () => {
    const { sqs } = fakeSqs({ GetQueueAttributes: [() => ({ Attributes: { QueueArn: arn('Conversion') } })] });

    await expect(queueChain(sqs, url('Conversion'))).rejects.toThrow('has no dead-letter queue');
  });
});

describe('redrive: one SQS message move task, waited for', () => {
  it('moves from the hold queue to the work queue when there is one, and answers the number moved once the task completed', async () => {
    const clock = fakeClock();
    const { sqs, sent } = fakeSqs({
      StartMessageMoveTask: [() => ({ TaskHandle: 'mine' })],
      ListMessageMoveTasks: [
        () => ({ Results: [task({ TaskHandle: 'mine', Status: 'RUNNING', ApproximateNumberOfMessagesMoved: 2 })] }),
        () => ({ Results: [task({ Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 5 })] }),
      ],
    });

    const result = await redrive(sqs, chain(true), clock);

    expect(result).toEqual({ moved: 5 });
    expect(sent[0]).toEqual({
      command: 'StartMessageMoveTask',
      input: { SourceArn: arn('ConversionHold'), DestinationArn: arn('Conversion') },
    });
  });

  it('moves from the dead-letter queue when there is no hold queue', async () => {
    const { sqs, sent } = fakeSqs({
      StartMessageMoveTask: [() => ({ TaskHandle: 'mine' })],
      ListMessageMoveTasks: [
        () => ({ Results: [task({ SourceArn: arn('ConversionDlq'), Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 0 })] }),
      ],
    });

    expect(await redrive(sqs, chain(false), fakeClock())).toEqual({ moved: 0 });
    expect(sent[0]!.input).toEqual({ SourceArn: arn('ConversionDlq'), DestinationArn: arn('Conversion') });
  });

  it('throws with the reason and the count when the task failed', async () => {
    const { sqs } = fakeSqs({
      StartMessageMoveTask: [() => ({ TaskHandle: 'mine' })],
      ListMessageMoveTasks: [
        () => ({
          Results: [
            task({ Status: 'FAILED', FailureReason: 'AWS.SimpleQueueService.NonExistentQueue', ApproximateNumberOfMessagesMoved: 3 }),
          ],
        }),
      ],
    });

    await expect(redrive(sqs, chain(true), fakeClock())).rejects.toThrow(
      /failed \(AWS.SimpleQueueService.NonExistentQueue\) after moving 3 messages/,
    );
  });

  it('stops waiting at the deadline and says the task carries on by itself', async () => {
    const { sqs } = fakeSqs({
      StartMessageMoveTask: [() => ({ TaskHandle: 'mine' })],
      ListMessageMoveTasks: Array.from({ length: 5 }, () => () => ({
        Results: [task({ TaskHandle: 'mine', Status: 'RUNNING', ApproximateNumberOfMessagesMoved: 7 })],
      })),
    });

    await expect(redrive(sqs, chain(true), { ...fakeClock(), timeoutMs: 3_000, pollMs: 1_000 })).rejects.toThrow(
      /still running after 3 s \(7 messages moved so far\); it carries on by itself/,
    );
  });
});

describe('findMoveTask: which listed task is this redrive', () => {
  const notBefore = 900_000;

  it('is the task with this handle while it runs', () => {
    const theirs = task({ TaskHandle: 'theirs', Status: 'RUNNING', StartedTimestamp: 2_000_000 });
    const mine = task({ TaskHandle: 'mine', Status: 'RUNNING' });

    expect(findMoveTask([theirs, mine], { handle: 'mine', startedTimestamp: undefined, notBefore })).toBe(mine);
  });

  it('is the task that started when this one was seen running, once it ended and lost its handle', () => {
    const later = task({ Status: 'RUNNING', TaskHandle: 'theirs', StartedTimestamp: 2_000_000 });
    const mine = task({ Status: 'COMPLETED', StartedTimestamp: 1_500_000 });

    expect(findMoveTask([later, mine], { handle: 'mine', startedTimestamp: 1_500_000, notBefore })).toBe(mine);
  });

  it('is the newest ended task when it ended before it was first seen, never a running one of someone else nor an old one', () => {
    const theirs = task({ Status: 'RUNNING', TaskHandle: 'theirs', StartedTimestamp: 2_000_000 });
    const mine = task({ Status: 'COMPLETED', StartedTimestamp: 1_000_000 });
    const old = task({ Status: 'COMPLETED', StartedTimestamp: 100_000 });

    expect(findMoveTask([theirs, mine, old], { handle: 'mine', startedTimestamp: undefined, notBefore })).toBe(mine);
    expect(findMoveTask([theirs, old], { handle: 'mine', startedTimestamp: undefined, notBefore })).toBeUndefined();
  });
});
