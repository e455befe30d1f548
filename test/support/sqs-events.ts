import { createHash, randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';

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
