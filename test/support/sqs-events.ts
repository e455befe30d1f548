import { createHash, randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import { getSqs } from '../../shared/clients.js';

/** One SQS message as Lambda's event source hands it to a worker, with `body` as sent. */
export function sqsRecord(body: string, options: { messageId?: string; queue?: string; region?: string } = {}): SQSRecord {
  const region = options.region ?? 'us-east-1';
  const now = String(Date.now());
  return {
    messageId: options.messageId ?? randomUUID(),
    receiptHandle: options.messageId ?? randomUUID(),
    body,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: now, SenderId: 'test', ApproximateFirstReceiveTimestamp: now },
    messageAttributes: {},
    md5OfBody: createHash('md5').update(body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:${region}:000000000000:${options.queue ?? 'Test'}`,
    awsRegion: region,
  };
}

/**
 * Runs `work` as a process that dies before any queue send: every SQS call of this process fails
 * while it runs (what was committed stays, nothing is queued), as a kill between a commit and its enqueue.
 */
export async function withQueuesCut<T>(work: () => Promise<T>): Promise<T> {
  const cut = `cut-queues-${randomUUID()}`;
  getSqs().middlewareStack.add(
    () => async () => {
      throw new Error('the process died before the send');
    },
    { step: 'initialize', name: cut },
  );
  try {
    return await work();
  } finally {
    getSqs().middlewareStack.remove(cut);
  }
}
