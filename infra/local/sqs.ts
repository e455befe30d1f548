import type { AddressInfo } from 'node:net';
import { createServer, type ServerResponse } from 'node:http';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createRequestHandler } from 'local-aws-sqs';
import { QueueJournal, type JournalMessage } from './sqs-journal.js';
import type { QueueArrival } from './sqs-requests.js';
import { Wakeup } from './wakeup.js';

export interface LocalSqs {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * local-aws-sqs on a free loopback port. With `journalFile` its queues survive a restart: every
 * message put on a queue (a send, a move to a dead-letter queue, a redrive), received and deleted is
 * journaled (`QueueJournal`) before the request that did it is answered, and a queue created again
 * on the next start gets back what it held, with the same message ids and receive counts: waiting,
 * delayed (for what is left of the delay), in flight (receivable at once: the worker that held it
 * is gone) or dead-lettered. Without one, in memory only.
 */
export async function startSqs(
  region: string,
  options: { journalFile?: string; onError?: (error: unknown) => void } = {},
): Promise<LocalSqs> {
  const { service, requestHandler } = createRequestHandler({
    port: 0,
    hostname: '127.0.0.1',
    region,
    emulateQueueCreationLifecycle: false,
  });
  const journal = options.journalFile ? new QueueJournal(options.journalFile, options.onError) : undefined;
  const keepNewQueues = journal ? journalQueues(service as unknown as { Queues: EmulatedQueue[] }, journal) : () => undefined;
  const server = createServer((request, response) => {
    if (journal) holdAnswerUntilDurable(response, journal, keepNewQueues);
    void requestHandler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // Queue URLs name this port (createSqsServer does the same once it listens).
  service.PORT = port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await journal?.close();
    },
  };
}

/**
 * The part of local-aws-sqs 2.0.2's queue the journal follows: every message a queue stores passes
 * through `setRecord` (sends, moves to the dead-letter queue with the same id, redrives), every
 * removal by a receipt handle through `delete`, a purge or queue deletion through `clearRecords`.
 */
interface EmulatedQueue {
  QueueName: string;
  DelaySeconds: number;
  MessageRetentionPeriod: number;
  setRecord: (input: Record<string, unknown>, messageId?: string) => { record: { MessageId: string; attributes: Record<string, string> } };
  receive(params: unknown): Promise<{ MessageId: string; ReceiptHandle: string; attributes: Record<string, string> }[]>;
  delete(receiptHandle: string): boolean;
  clearRecords(): void;
}

/** The longest DelaySeconds SQS takes. */
const MAX_DELAY_SECONDS = 900;

/**
 * Journals what the emulator's queues do, and gives each queue, when it is created, what the journal
 * kept for it. Answers a function to call after each request: it takes on the queues created since.
 */
function journalQueues(service: { Queues: EmulatedQueue[] }, journal: QueueJournal): () => void {
  const kept = new WeakSet<EmulatedQueue>();
  /** The receipt handles each message was received with (a delete names a handle, the journal an id). */
  const idOfHandle = new Map<string, string>();
  const handlesOf = new Map<string, string[]>();
  const forget = (id: string) => {
    for (const handle of handlesOf.get(id) ?? []) idOfHandle.delete(handle);
    handlesOf.delete(id);
  };
  return () => {
    for (const queue of service.Queues) {
      if (kept.has(queue)) continue;
      kept.add(queue);
      const name = queue.QueueName;
      const setRecord = queue.setRecord;
      const now = Date.now();
      for (const [id, live] of journal.live()) {
        if (live.queue !== name) continue;
        const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((live.visibleAt - now) / 1000)));
        const stored = setRecord({ ...live.message, DelaySeconds: delaySeconds }, id);
        stored.record.attributes.ApproximateReceiveCount = String(live.receiveCount);
      }
      queue.setRecord = (input, messageId) => {
        const stored = setRecord(input, messageId);
        const at = Date.now();
        const delay = Number(input.DelaySeconds);
        journal.put(
          stored.record.MessageId,
          name,
          messageOf(input),
          at + (Number.isNaN(delay) ? queue.DelaySeconds : delay) * 1000,
          at + queue.MessageRetentionPeriod * 1000,
        );
        return stored;
      };
      const receive = queue.receive.bind(queue);
      queue.receive = async (params) => {
        const records = await receive(params);
        for (const record of records) {
          idOfHandle.set(record.ReceiptHandle, record.MessageId);
          handlesOf.set(record.MessageId, [...(handlesOf.get(record.MessageId) ?? []), record.ReceiptHandle]);
          journal.received(record.MessageId, Number(record.attributes.ApproximateReceiveCount));
        }
        return records;
      };
      const remove = queue.delete.bind(queue);
      queue.delete = (receiptHandle) => {
        const removed = remove(receiptHandle);
        const id = idOfHandle.get(receiptHandle);
        // A handle of the queue the message left (for a dead-letter queue) removes nothing from where it is now.
        if (removed && id !== undefined && journal.live().get(id)?.queue === name) {
          forget(id);
          journal.deleted(id);
        }
        return removed;
      };
      const clear = queue.clearRecords.bind(queue);
      queue.clearRecords = () => {
        clear();
        journal.cleared(name);
      };
    }
  };
}

function messageOf(input: Record<string, unknown>): JournalMessage {
  const fields = ['MessageAttributes', 'MessageSystemAttributes', 'MessageGroupId', 'MessageDeduplicationId'] as const;
  return {
    MessageBody: String(input.MessageBody ?? ''),
    ...Object.fromEntries(fields.filter((field) => input[field] !== undefined).map((field) => [field, input[field]])),
  };
}

/** Delays a response's end until the journal holds every change made so far (its own among them). */
function holdAnswerUntilDurable(response: ServerResponse, journal: QueueJournal, keepNewQueues: () => void): void {
  const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
  response.end = ((...args: unknown[]) => {
    keepNewQueues();
    const durable = journal.durable();
    if (!durable) return end(...args);
    void durable.then(() => end(...args));
    return response;
  }) as ServerResponse['end'];
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
    ...(settings.deadLetterVisibilityTimeoutSeconds === undefined
      ? {}
      : { VisibilityTimeout: String(settings.deadLetterVisibilityTimeoutSeconds) }),
    ...(holdArn && settings.deadLetterHold
      ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: holdArn, maxReceiveCount: settings.deadLetterHold.maxReceiveCount }) }
      : {}),
  };
  const dlq = await sqs.send(
    new CreateQueueCommand({ QueueName: `${name}-dlq`, ...(Object.keys(dlqAttributes).length > 0 ? { Attributes: dlqAttributes } : {}) }),
  );
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
        {
          dataType: value.DataType ?? 'String',
          stringValue: value.StringValue,
          binaryValue: value.BinaryValue ? Buffer.from(value.BinaryValue).toString('base64') : undefined,
        },
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: region,
  };
}
