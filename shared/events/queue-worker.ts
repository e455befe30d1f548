import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { logger } from '../logger.js';
import { traceWork } from '../tracing.js';

type AnySchema = v.GenericSchema<unknown, unknown>;

/** One kind of job a worker runs: the message body `{ type, ... }` is validated by `schema`. */
export interface JobHandler<S extends AnySchema = AnySchema> {
  schema: S;
  /** Must be idempotent: SQS delivers at least once and failed records are retried. */
  run(job: v.InferOutput<S>, record: SQSRecord): Promise<void>;
}

// The erased shape a job table holds; `defineJob()` keeps each job's own types for its `run`.
// `run` is a method, so its parameter is checked bivariantly and no `any` is needed.
export type JobTable = Record<string, JobHandler>;

/** Declares one job with `run` typed from its schema. */
export function defineJob<S extends AnySchema>(handler: JobHandler<S>): JobHandler<S> {
  return handler;
}

/**
 * Thrown by a job to make its whole batch fail as a crashed Lambda would: the handler throws, so no
 * record of the batch is deleted and all of them reappear after the visibility timeout.
 */
export class WorkerCrash extends Error {
  override name = 'WorkerCrash';
}

export interface QueueWorkerOptions {
  /** The batch's records run at once, so one slow record never delays the others (webhook deliveries to different receivers). */
  concurrent?: boolean;
  /**
   * The job type of a message that does not name one (`{ type }` is ours; S3's notifications have
   * their own shape); undefined for an unknown message.
   */
  jobTypeOf?: (message: unknown) => string | undefined;
}

/**
 * An SQS handler that runs each record's job and reports failures as `batchItemFailures`, so only
 * the failed records are retried and a poison message ends in the dead-letter queue after the
 * queue's maxReceiveCount instead of blocking its batch.
 */
export function createQueueWorker(worker: string, jobs: JobTable, options: QueueWorkerOptions = {}) {
  return async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    if (context) logger.addContext(context);
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    let crash: WorkerCrash | undefined;
    const runOne = async (record: SQSRecord) => {
      try {
        await runRecord(jobs, record, options.jobTypeOf ?? typeField);
      } catch (error) {
        if (error instanceof WorkerCrash) crash = error;
        logger.error('job failed', {
          worker,
          messageId: record.messageId,
          receiveCount: Number(record.attributes.ApproximateReceiveCount),
          error,
        });
        failures.push({ itemIdentifier: record.messageId });
      }
    };
    const traceDone = traceWork(worker, { worker, records: String(event.Records.length) });
    if (options.concurrent) await Promise.all(event.Records.map(runOne));
    else for (const record of event.Records) await runOne(record);
    traceDone(crash);
    if (crash) throw crash;
    return { batchItemFailures: failures };
  };
}

/** Our own messages name their job: `{ type, ... }`. */
function typeField(message: unknown): string | undefined {
  const type = (message as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? type : undefined;
}

async function runRecord(jobs: JobTable, record: SQSRecord, jobTypeOf: (message: unknown) => string | undefined): Promise<void> {
  let message: unknown;
  try {
    message = JSON.parse(record.body);
  } catch {
    throw new Error('message body is not JSON');
  }
  const type = jobTypeOf(message);
  const job = type !== undefined && Object.hasOwn(jobs, type) ? jobs[type] : undefined;
  if (!job) throw new Error(`unknown job type ${JSON.stringify(type ?? (message as { type?: unknown } | null)?.type)}`);
  const parsed = v.safeParse(job.schema, message);
  if (!parsed.success) throw new Error(`invalid ${type} job: ${parsed.issues.map((issue) => issue.message).join('; ')}`);
  await job.run(parsed.output, record);
}
