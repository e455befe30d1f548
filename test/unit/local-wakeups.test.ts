import { describe, expect, it } from 'vitest';
import { queueArrivalReader, queueNameOf, type QueueArrival } from '../../infra/local/sqs-requests.js';
import { Wakeup } from '../../infra/local/wakeup.js';

/** One SQS JSON-protocol request as the AWS SDK writes it. */
function sqsRequest(action: string, input: Record<string, unknown>, extraHeaders = ''): Buffer {
  const body = Buffer.from(JSON.stringify(input));
  return Buffer.concat([
    Buffer.from(
      `POST / HTTP/1.1\r\ncontent-type: application/x-amz-json-1.0\r\nx-amz-target: AmazonSQS.${action}\r\n${extraHeaders}content-length: ${body.length}\r\nhost: 127.0.0.1\r\n\r\n`,
    ),
    body,
  ]);
}

const QUEUE_URL = 'http://127.0.0.1:4566/000000000000/review-board-webhooks';

function read(chunks: Buffer[]): QueueArrival[] {
  const seen: QueueArrival[] = [];
  const feed = queueArrivalReader((arrival) => seen.push(arrival));
  for (const chunk of chunks) feed(chunk);
  return seen;
}

describe('the SQS front reads which queue a request may have filled', () => {
  it('reports a send with its queue, and a batch with its longest delay', () => {
    const stream = Buffer.concat([
      sqsRequest('SendMessage', { QueueUrl: QUEUE_URL, MessageBody: '{"QueueUrl":"http://elsewhere/000000000000/other"}' }),
      sqsRequest('SendMessageBatch', {
        QueueUrl: QUEUE_URL,
        Entries: [
          { Id: '0', MessageBody: 'a', DelaySeconds: 3 },
          { Id: '1', MessageBody: 'b' },
        ],
      }),
    ]);

    expect(read([stream])).toEqual([
      { action: 'SendMessage', queueName: 'review-board-webhooks', afterSeconds: 0 },
      { action: 'SendMessageBatch', queueName: 'review-board-webhooks', afterSeconds: 3 },
    ]);
  });

  it('finds the same requests however the bytes are split across chunks', () => {
    const stream = Buffer.concat([
      sqsRequest('ReceiveMessage', { QueueUrl: QUEUE_URL, MaxNumberOfMessages: 10 }),
      sqsRequest('SendMessage', { QueueUrl: QUEUE_URL, MessageBody: 'é'.repeat(40), DelaySeconds: 2 }),
      sqsRequest('DeleteMessageBatch', { QueueUrl: QUEUE_URL, Entries: [] }),
    ]);
    const whole = read([stream]);

    for (let at = 1; at < stream.length; at += 1) {
      expect(read([stream.subarray(0, at), stream.subarray(at)])).toEqual(whole);
    }
    expect(read([...stream].map((byte) => Buffer.from([byte])))).toEqual(whole);
    expect(whole).toEqual([{ action: 'SendMessage', queueName: 'review-board-webhooks', afterSeconds: 2 }]);
  });

  it('reports visibility changes with their timeout, and a move task by its destination or, naming none, by no queue', () => {
    const stream = Buffer.concat([
      sqsRequest('ChangeMessageVisibility', { QueueUrl: QUEUE_URL, ReceiptHandle: 'r', VisibilityTimeout: 0 }),
      sqsRequest('ChangeMessageVisibilityBatch', { QueueUrl: QUEUE_URL, Entries: [{ Id: '0', ReceiptHandle: 'r', VisibilityTimeout: 5 }] }),
      sqsRequest('StartMessageMoveTask', {
        SourceArn: 'arn:aws:sqs:us-east-1:000000000000:review-board-webhooks-dlq',
        DestinationArn: 'arn:aws:sqs:us-east-1:000000000000:review-board-webhooks',
      }),
      sqsRequest('StartMessageMoveTask', { SourceArn: 'arn:aws:sqs:us-east-1:000000000000:review-board-webhooks-dlq' }),
    ]);

    expect(read([stream])).toEqual([
      { action: 'ChangeMessageVisibility', queueName: 'review-board-webhooks', afterSeconds: 0 },
      { action: 'ChangeMessageVisibilityBatch', queueName: 'review-board-webhooks', afterSeconds: 5 },
      // local-aws-sqs moves them a second after the task starts.
      { action: 'StartMessageMoveTask', queueName: 'review-board-webhooks', afterSeconds: 1 },
      { action: 'StartMessageMoveTask', afterSeconds: 1 },
    ]);
  });

  it('reports a send whose body is not JSON without a queue, and stops reading a connection it cannot frame', () => {
    const garbled = Buffer.from('POST / HTTP/1.1\r\nx-amz-target: AmazonSQS.SendMessage\r\ncontent-length: 5\r\n\r\nnope!');
    const chunked = Buffer.from(
      'POST / HTTP/1.1\r\nx-amz-target: AmazonSQS.SendMessage\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    );

    expect(read([garbled])).toEqual([{ action: 'SendMessage', afterSeconds: 0 }]);
    expect(read([chunked, sqsRequest('SendMessage', { QueueUrl: QUEUE_URL, MessageBody: 'x' })])).toEqual([]);
  });

  it('names a queue by the last part of its URL', () => {
    expect(queueNameOf(QUEUE_URL)).toBe('review-board-webhooks');
    expect(queueNameOf('http://127.0.0.1:4566/000000000000/')).toBeUndefined();
  });
});

describe('Wakeup (the idle sleep of the local pollers and stream pump)', () => {
  it('ends a sleep on a wake, the longest asleep first', async () => {
    const wakeup = new Wakeup();
    const order: string[] = [];
    const first = wakeup.sleep(60_000).then(() => order.push('first'));
    const second = wakeup.sleep(60_000).then(() => order.push('second'));

    wakeup.wake();
    await first;
    wakeup.wake();
    await second;

    expect(order).toEqual(['first', 'second']);
  });

  it('keeps a wake that found nobody asleep for the next sleep, up to maxPending', async () => {
    const wakeup = new Wakeup(2);
    wakeup.wake(5);
    const slept: string[] = [];

    await wakeup.sleep(60_000).then(() => slept.push('a'));
    await wakeup.sleep(60_000).then(() => slept.push('b'));
    const started = performance.now();
    await wakeup.sleep(30).then(() => slept.push('c'));

    expect(slept).toEqual(['a', 'b', 'c']);
    // The third wake was beyond maxPending: that sleep ran its time.
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('ends every sleep on wakeAll, and a sleep nobody wakes after its time', async () => {
    const wakeup = new Wakeup();
    const sleeps = [wakeup.sleep(60_000), wakeup.sleep(60_000)];
    wakeup.wakeAll();
    await Promise.all(sleeps);

    const started = performance.now();
    await wakeup.sleep(20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
  });
});
