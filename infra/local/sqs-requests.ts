/**
 * Messages that may have become receivable on a queue because of one SQS request: a send, a
 * visibility change, a move task. `queueName` is missing when the request names no one queue (a move
 * task back to the dead-letter queue's sources); `afterSeconds` is the latest they become receivable
 * (a send's longest DelaySeconds, a visibility change's longest timeout), 0 for at once.
 */
export interface QueueArrival {
  action: string;
  queueName?: string;
  afterSeconds: number;
}

/** The SQS actions after which a queue may hold a receivable message it did not hold before. */
const ARRIVING = new Set([
  'SendMessage',
  'SendMessageBatch',
  'ChangeMessageVisibility',
  'ChangeMessageVisibilityBatch',
  'StartMessageMoveTask',
]);

/** How long after its start local-aws-sqs first moves a move task's messages. */
const MOVE_TASK_TICK_SECONDS = 1;

/** Larger requests are not read: SQS bodies are at most 1 MiB. */
const MAX_REQUEST_BYTES = 2 * 1024 * 1024;

/**
 * Reads the requests of one client connection as its bytes stream past (HTTP/1.1 framed by
 * Content-Length, as the AWS SDK sends its JSON protocol) and reports each request that may make a
 * message receivable. A connection it cannot frame (chunked, oversized) is no longer read: pollers
 * still find its messages on their idle receive, only later.
 */
export function queueArrivalReader(onArrival: (arrival: QueueArrival) => void): (chunk: Buffer) => void {
  let buffer: Buffer = Buffer.alloc(0);
  let reading = true;
  return (chunk) => {
    if (!reading) return;
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    for (;;) {
      const headEnd = buffer.indexOf('\r\n\r\n');
      if (headEnd < 0) {
        if (buffer.length > MAX_REQUEST_BYTES) reading = false;
        return;
      }
      const head = buffer.subarray(0, headEnd).toString('latin1');
      const length = Number(/\r\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1] ?? 0);
      if (/\r\ntransfer-encoding:/i.test(head) || length > MAX_REQUEST_BYTES) {
        reading = false;
        return;
      }
      const end = headEnd + 4 + length;
      if (buffer.length < end) return;
      const body = buffer.subarray(headEnd + 4, end);
      buffer = buffer.subarray(end);
      const action = /\r\nx-amz-target:[ \t]*AmazonSQS\.(\w+)/i.exec(head)?.[1];
      if (action && ARRIVING.has(action)) onArrival(arrivalOf(action, body));
    }
  };
}

function arrivalOf(action: string, body: Buffer): QueueArrival {
  let input: Record<string, unknown>;
  try {
    input = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { action, afterSeconds: 0 };
  }
  const entries = Array.isArray(input.Entries) ? (input.Entries as Record<string, unknown>[]) : [input];
  const seconds = entries.map((entry) => Number(entry.DelaySeconds ?? entry.VisibilityTimeout ?? 0)).filter(Number.isFinite);
  const queueName = (typeof input.QueueUrl === 'string' ? queueNameOf(input.QueueUrl) : undefined) ?? nameOf(input.DestinationArn, ':');
  // local-aws-sqs moves a task's messages on a one-second timer, the first tick a second after the start.
  const after = action === 'StartMessageMoveTask' ? MOVE_TASK_TICK_SECONDS : Math.max(0, ...seconds);
  return { action, ...(queueName ? { queueName } : {}), afterSeconds: after };
}

/** A queue's name: the last part of its URL (`http://host/000000000000/name`). */
export function queueNameOf(queueUrl: string): string | undefined {
  return nameOf(queueUrl, '/');
}

/** The last `separator`-separated part of a queue URL or ARN. */
function nameOf(value: unknown, separator: string): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value.slice(value.lastIndexOf(separator) + 1) || undefined : undefined;
}
