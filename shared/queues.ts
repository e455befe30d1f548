/**
 * The work queues. The CDK data stack, the worker event sources and the local stack's poller all
 * read these numbers, so the emulator retries exactly as AWS does.
 */
export interface QueueDefinition {
  /** Construct id and local queue name. */
  id: string;
  /** Seconds a received message stays hidden; at least 6x the worker timeout, as AWS advises. */
  visibilityTimeoutSeconds: number;
  /** Receives before a message moves to the dead-letter queue. */
  maxReceiveCount: number;
  batchSize: number;
  /** Seconds the worker function may run. */
  workerTimeoutSeconds: number;
  /** Days a dead letter is kept for inspection. */
  deadLetterRetentionDays: number;
  /**
   * For a queue whose dead-letter queue has a consumer: seconds a received dead letter stays hidden,
   * at least 6x that consumer's timeout. Without one, SQS's default (30 s).
   */
  deadLetterVisibilityTimeoutSeconds?: number;
  /**
   * For a queue whose dead-letter queue has a consumer: the hold queue behind it. The consumer
   * deletes what it handled, so it first hands each dead letter on to the hold queue, where it waits
   * for an operator's `admin queue redrive`. The hold queue is also the dead-letter queue's own
   * dead-letter queue: a dead letter the consumer fails on `maxReceiveCount` times goes there too.
   */
  deadLetterHold?: { maxReceiveCount: number };
  /**
   * Batches worked on at once (the event source's maxConcurrency, the local poller's receive loops):
   * for a queue whose jobs may wait on outside services, so one slow batch never holds up the rest.
   */
  maxConcurrency?: number;
}

export const QUEUES = {
  // S3 ObjectCreated notifications of the upload prefix, for upload-confirmed (a HEAD and one write
  // each): S3 retries its deliveries to a queue, and what upload-confirmed fails on waits in the
  // dead-letter queue for a redrive instead of being dropped after Lambda's two async retries.
  uploads: {
    id: 'Uploads',
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 5,
    batchSize: 10,
    workerTimeoutSeconds: 30,
    deadLetterRetentionDays: 14,
  },
  conversion: {
    id: 'Conversion',
    visibilityTimeoutSeconds: 5400,
    maxReceiveCount: 3,
    batchSize: 1,
    workerTimeoutSeconds: 900,
    deadLetterRetentionDays: 14,
    // conversion-dead-letters (30 s) marks the markups of dead jobs failed.
    deadLetterVisibilityTimeoutSeconds: 180,
    // Ten tries of the consumer, 3 minutes apart (about half an hour); then the dead letter waits in the hold queue as it is.
    deadLetterHold: { maxReceiveCount: 10 },
  },
  thumbnails: {
    id: 'Thumbnails',
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 3,
    batchSize: 1,
    workerTimeoutSeconds: 60,
    deadLetterRetentionDays: 14,
  },
  webhookDelivery: {
    id: 'WebhookDelivery',
    // 6x the worker timeout; a worker that died mid-batch has its deliveries retried after this.
    visibilityTimeoutSeconds: 120,
    // A poison-message backstop only: every retry of a delivery is a new message.
    maxReceiveCount: 8,
    batchSize: 10,
    // A batch's attempts run at once, each cut at 15 s, plus the log and queue writes around them.
    workerTimeoutSeconds: 20,
    maxConcurrency: 5,
    deadLetterRetentionDays: 14,
  },
  // Cross-workspace folder moves (functions/item-moves): each job carries one bounded batch of a
  // recorded move along and queues the next; the move record in the table is the source of truth.
  moves: {
    id: 'Moves',
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    batchSize: 1,
    workerTimeoutSeconds: 60,
    deadLetterRetentionDays: 14,
  },
} as const satisfies Record<string, QueueDefinition>;

export type QueueName = keyof typeof QUEUES;

/** A queue's hold queue settings, when its dead-letter queue has a consumer. */
export const deadLetterHoldOf = (name: QueueName): QueueDefinition['deadLetterHold'] => (QUEUES[name] as QueueDefinition).deadLetterHold;

/** A queue's `maxConcurrency`, or undefined (one batch at a time locally, Lambda's default deployed). */
export const maxConcurrencyOf = (name: QueueName): number | undefined => (QUEUES[name] as QueueDefinition).maxConcurrency;
