import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createSqsServer } from 'local-aws-sqs';
import type { QueueArrival } from './sqs-requests.js';
import { Wakeup } from './wakeup.js';

export interface LocalSqs {
  endpoint: string;
  stop(): Promise<void>;
}

/** local-aws-sqs, in memory, on a free loopback port. */
export async function startSqs(region: string): Promise<LocalSqs> {
  const server: Server = await createSqsServer({ port: 0, hostname: '127.0.0.1', region, emulateQueueCreationLifecycle: false });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface QueuePair {
  url: string;
  arn: string;
  deadLetterUrl: string;
  deadLetterArn: string;
  /** The hold queue behind a dead-letter queue that has a consumer (QueueDefinition.deadLetterHold). */
  deadLetterHoldUrl?: string;
  deadLetterHoldArn?: string;
}

/**
 * A queue and its dead-letter queue (and, with `deadLetterHold`, the hold queue behind that), wired
 * with redrive policies as the CDK data stack does.
 */
export async function createQueuePair(
  sqs: SQSClient,
  name: string,
  settings: {
    visibilityTimeoutSeconds: number;
    maxReceiveCount: number;
    deadLetterVisibilityTimeoutSeconds?: number;
    deadLetterHold?: { maxReceiveCount: number };
  },
): Promise<QueuePair> {
  const hold = settings.deadLetterHold ? (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq-hold` }))).QueueUrl! : undefined;
  const holdArn = hold ? await queueArn(sqs, hold) : undefined;
  const dlqAttributes: Record<string, string> = {
    ...(settings.deadLetterVisibilityTimeoutSeconds === undefined ? {} : { VisibilityTimeout: String(settings.deadLetterVisibilityTimeoutSeconds) }),
    ...(holdArn && settings.deadLetterHold ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: holdArn, maxReceiveCount: settings.deadLetterHold.maxReceiveCount }) } : {}),
  };
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq`, ...(Object.keys(dlqAttributes).length > 0 ? { Attributes: dlqAttributes } : {}) }));
  const dlqArn = await queueArn(sqs, dlq.QueueUrl!);
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: settings.maxReceiveCount }),
      },
    }),
  );
  return {
    url: queue.QueueUrl!,
    arn: await queueArn(sqs, queue.QueueUrl!),
    deadLetterUrl: dlq.QueueUrl!,
    deadLetterArn: dlqArn,
    ...(hold && holdArn ? { deadLetterHoldUrl: hold, deadLetterHoldArn: holdArn } : {}),
  };
}

async function queueArn(sqs: SQSClient, url: string): Promise<string> {
  const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return attributes.Attributes!.QueueArn!;
}

export type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

export interface Poller {
  /** Ends one idle loop's sleep: a message may be waiting. */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * Feeds a queue to a worker handler the way a Lambda event source mapping with
 * `ReportBatchItemFailures` does: batches of up to `batchSize`, successes deleted, failures left to
 * reappear after the queue's visibility timeout (and to move to the dead-letter queue after
 * maxReceiveCount). It never changes visibility itself: local-aws-sqs would count that as a receive.
 * It short-polls instead of long-polling: a long poll that is waiting when a SendMessageBatch arrives
 * gets every message twice from local-aws-sqs 2.0.2 (and two receives are counted), which would
 * dead-letter a job after one failure. An idle loop sleeps `idleMs` (1 s) between receives, and
 * `wake()` (the SQS front calls it once a send to the queue is answered) ends the sleep at once: a
 * job starts within milliseconds while an idle stack polls ten times less than at a fixed 100 ms.
 */
export function startPoller(
  sqs: SQSClient,
  queue: { url: string; arn: string },
  handler: SqsHandler,
  options: {
    batchSize: number;
    region: string;
    concurrency?: number;
    /** How long an idle receive loop sleeps unless woken. @default 1000 */
    idleMs?: number;
    /** After each batch handed to the handler (the local stack wakes the stream pump: the handler may have written). */
    onBatch?: () => void;
    onError?: (error: unknown) => void;
  },
): Poller {
  let running = true;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const idle = new Wakeup(concurrency);
  const idleMs = options.idleMs ?? IDLE_POLL_MS;
  // `concurrency` receive loops, like Lambda's concurrent batches: one slow batch holds up no other.
  const receiveLoop = async () => {
    while (running) {
      try {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queue.url,
            MaxNumberOfMessages: options.batchSize,
            WaitTimeSeconds: 0,
            // local-aws-sqs reports receive counts only for the legacy AttributeNames parameter.
            AttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        const messages = uniqueById(received.Messages ?? []);
        if (!running) break;
        if (messages.length === 0) {
          await idle.sleep(idleMs);
          continue;
        }
        // There may be more: a sleeping sibling loop joins in, as Lambda scales out on a backlog.
        if (concurrency > 1) idle.wake();
        const records = messages.map((message) => toRecord(message, queue.arn, options.region));
        let failed: Set<string>;
        try {
          const response = await handler({ Records: records });
          failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
        } catch (error) {
          options.onError?.(error);
          failed = new Set(records.map((record) => record.messageId));
        }
        options.onBatch?.();
        const done = messages.filter((message) => !failed.has(message.MessageId!));
        if (done.length > 0) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queue.url,
              Entries: done.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle! })),
            }),
          );
        }
      } catch (error) {
        if (!running) break;
        options.onError?.(error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  };
  const loops = Array.from({ length: concurrency }, receiveLoop);
  return {
    wake: () => idle.wake(),
    stop: async () => {
      running = false;
      idle.wakeAll();
      await Promise.all(loops);
    },
  };
}

/**
 * The SQS front's `onArrival` for the pollers of a stack, by queue name: wakes the poller of the
 * queue the request named (every poller when it named none) at once, and again once its delay is over.
 */
export function wakeOnArrival(pollers: ReadonlyMap<string, Poller>): (arrival: QueueArrival) => void {
  const wake = (queueName: string | undefined) => {
    for (const [name, poller] of pollers) if (queueName === undefined || name === queueName) poller.wake();
  };
  return ({ queueName, afterSeconds }) => {
    wake(queueName);
    if (afterSeconds > 0) setTimeout(() => wake(queueName), afterSeconds * 1000 + ARRIVAL_SLACK_MS).unref();
  };
}

/** After a delayed send's delay, the poller wakes this much later, so the message is surely receivable. */
const ARRIVAL_SLACK_MS = 50;

/** How long an idle receive loop sleeps when nothing wakes it. */
const IDLE_POLL_MS = 1_000;

function uniqueById(messages: Message[]): Message[] {
  const byId = new Map(messages.map((message) => [message.MessageId, message]));
  return [...byId.values()];
}

function toRecord(message: Message, arn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        { dataType: value.DataType ?? 'String', stringValue: value.StringValue, binaryValue: value.BinaryValue ? Buffer.from(value.BinaryValue).toString('base64') : undefined },
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: region,
  };
}
