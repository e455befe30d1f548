import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListMessageMoveTasksCommand,
  StartMessageMoveTaskCommand,
  type ListMessageMoveTasksResultEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Config } from '../../shared/config.js';
import type { QueueName } from '../../shared/queues.js';
import { UsageError } from './usage-error.js';

/** The queues as operators name them (`--queue`), and the queue of `QUEUES` each name means. */
export const QUEUE_OPTIONS = {
  uploads: 'uploads',
  conversion: 'conversion',
  webhooks: 'webhookDelivery',
  thumbnails: 'thumbnails',
  moves: 'moves',
} as const satisfies Record<string, QueueName>;
export type QueueOption = keyof typeof QUEUE_OPTIONS;

/** The queue `--queue` names; a UsageError saying what it takes otherwise. */
export function queueOption(value: unknown): { option: QueueOption; name: QueueName } {
  if (typeof value !== 'string' || !Object.hasOwn(QUEUE_OPTIONS, value)) {
    throw new UsageError(`--queue takes one of ${Object.keys(QUEUE_OPTIONS).join(', ')}`);
  }
  return { option: value as QueueOption, name: QUEUE_OPTIONS[value as QueueOption] };
}

/** The URL of a work queue as this process knows it (its `*_QUEUE_URL` variable; the local stack sets them). */
export function queueUrlOf(config: Config, name: QueueName): string | undefined {
  const urls: Record<QueueName, string | undefined> = {
    uploads: config.uploadQueueUrl,
    conversion: config.conversionQueueUrl,
    webhookDelivery: config.webhookQueueUrl,
    thumbnails: config.thumbnailQueueUrl,
    moves: config.moveQueueUrl,
  };
  return urls[name];
}

type Sqs = Pick<SQSClient, 'send'>;

export interface QueueAddress {
  url: string;
  arn: string;
}

/** A work queue, its dead-letter queue and, when that has a consumer, the hold queue behind it. */
export interface QueueChain {
  queue: QueueAddress;
  deadLetterQueue: QueueAddress;
  deadLetterHold?: QueueAddress;
}

/**
 * Finds a work queue's dead-letter queue, and the hold queue behind that, from the queues' own
 * redrive policies: the same on a deployed stack (where the operator gives only the work queue's
 * URL) and on the local emulator.
 */
export async function queueChain(sqs: Sqs, url: string): Promise<QueueChain> {
  const queue = await readQueue(sqs, url);
  if (!queue.deadLetterTargetArn) throw new Error(`${url} has no dead-letter queue (no RedrivePolicy)`);
  const deadLetterQueue = await readQueue(sqs, await urlOfArn(sqs, queue.deadLetterTargetArn));
  const deadLetterHold = deadLetterQueue.deadLetterTargetArn
    ? { url: await urlOfArn(sqs, deadLetterQueue.deadLetterTargetArn), arn: deadLetterQueue.deadLetterTargetArn }
    : undefined;
  return {
    queue: { url: queue.url, arn: queue.arn },
    deadLetterQueue: { url: deadLetterQueue.url, arn: deadLetterQueue.arn },
    ...(deadLetterHold ? { deadLetterHold } : {}),
  };
}

async function readQueue(sqs: Sqs, url: string): Promise<QueueAddress & { deadLetterTargetArn?: string }> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn', 'RedrivePolicy'] }),
  );
  if (!Attributes.QueueArn) throw new Error(`${url} did not say its ARN`);
  const policy = Attributes.RedrivePolicy ? (JSON.parse(Attributes.RedrivePolicy) as { deadLetterTargetArn?: string }) : undefined;
  return { url, arn: Attributes.QueueArn, ...(policy?.deadLetterTargetArn ? { deadLetterTargetArn: policy.deadLetterTargetArn } : {}) };
}

/** `arn:aws:sqs:<region>:<account>:<name>` -> its URL (GetQueueUrl by name and owner). */
async function urlOfArn(sqs: Sqs, arn: string): Promise<string> {
  const [, , , , account, name] = arn.split(':');
  if (!name) throw new Error(`${arn} is not an SQS queue ARN`);
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }));
  if (!QueueUrl) throw new Error(`no URL for ${arn}`);
  return QueueUrl;
}

/** Messages on a queue: waiting (`visible`), received and not yet deleted or returned (`inFlight`), not yet due (`delayed`). */
export interface QueueDepth {
  visible: number;
  inFlight: number;
  delayed: number;
}

export async function depthOf(sqs: Sqs, url: string): Promise<QueueDepth> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/** What `queue show` prints for one queue: the depth of each queue of its chain, and which one a redrive empties. */
export async function describeChain(sqs: Sqs, chain: QueueChain) {
  const [queue, deadLetterQueue, deadLetterHold] = await Promise.all([
    depthOf(sqs, chain.queue.url),
    depthOf(sqs, chain.deadLetterQueue.url),
    chain.deadLetterHold ? depthOf(sqs, chain.deadLetterHold.url) : undefined,
  ]);
  return {
    queue,
    deadLetterQueue,
    ...(deadLetterHold ? { deadLetterHold } : {}),
    redriveFrom: deadLetterHold ? 'deadLetterHold' : 'deadLetterQueue',
  };
}

export interface RedriveOptions {
  /** How long to wait for the move task to end. */
  timeoutMs?: number;
  pollMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** A move task still running when the redrive stopped waiting goes on by itself; SQS keeps its tasks listed. */
const DEFAULT_REDRIVE_TIMEOUT_MS = 15 * 60_000;
/** How far back a task found without its handle may have started (clock skew between here and SQS). */
const TASK_START_TOLERANCE_MS = 5 * 60_000;

/**
 * Moves what waits in the chain's hold queue (or, without one, its dead-letter queue) back to the
 * work queue with an SQS message move task (StartMessageMoveTask), and waits for the task to end:
 * SQS moves each message (a new message id, its receive count and retention starting afresh) and
 * only then deletes it, so nothing is lost and nothing is half-moved. Answers the number moved;
 * throws when the task failed, was cancelled, or is still running after `timeoutMs`.
 */
export async function redrive(sqs: Sqs, chain: QueueChain, options: RedriveOptions = {}): Promise<{ moved: number }> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const source = chain.deadLetterHold ?? chain.deadLetterQueue;
  const requestedAt = now();
  const deadline = requestedAt + (options.timeoutMs ?? DEFAULT_REDRIVE_TIMEOUT_MS);
  const { TaskHandle: handle } = await sqs.send(
    new StartMessageMoveTaskCommand({ SourceArn: source.arn, DestinationArn: chain.queue.arn }),
  );
  let startedTimestamp: number | undefined;
  let moved = 0;
  for (;;) {
    const { Results = [] } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: source.arn, MaxResults: 10 }));
    const task = findMoveTask(Results, { handle, startedTimestamp, notBefore: requestedAt - TASK_START_TOLERANCE_MS });
    if (task) {
      startedTimestamp ??= task.StartedTimestamp;
      moved = task.ApproximateNumberOfMessagesMoved ?? 0;
      if (task.Status === 'COMPLETED') return { moved };
      if (task.Status === 'FAILED')
        throw new Error(
          `the move task from ${source.arn} failed (${task.FailureReason ?? 'no reason given'}) after moving ${moved} messages`,
        );
      if (task.Status === 'CANCELLED') throw new Error(`the move task from ${source.arn} was cancelled after moving ${moved} messages`);
    }
    if (now() >= deadline) {
      throw new Error(
        `the move task from ${source.arn} is still running after ${Math.round((now() - requestedAt) / 1000)} s (${moved} messages moved so far); it carries on by itself: follow it with queue show`,
      );
    }
    await sleep(options.pollMs ?? 1_000);
  }
}

/**
 * This redrive's task among a source queue's recent tasks (newest first). SQS names a task by its
 * handle only while it runs, so a task seen running is known afterwards by its start time; one that
 * ended before it was first seen is the newest that is not running (a source queue runs one task at
 * a time, so a running one is another's, started after ours ended) and started no earlier than
 * `notBefore`.
 */
export function findMoveTask(
  results: readonly ListMessageMoveTasksResultEntry[],
  mine: { handle: string | undefined; startedTimestamp: number | undefined; notBefore: number },
): ListMessageMoveTasksResultEntry | undefined {
  const byHandle = mine.handle ? results.find((task) => task.TaskHandle === mine.handle) : undefined;
  if (byHandle) return byHandle;
  if (mine.startedTimestamp !== undefined) return results.find((task) => task.StartedTimestamp === mine.startedTimestamp);
  return results.find((task) => task.Status !== 'RUNNING' && (task.StartedTimestamp ?? 0) >= mine.notBefore);
}
