import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
  type _Record as StreamRecord,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { matchesStreamFilter, type FilterableStreamRecord } from '../../shared/events/outbox-stream.js';
import { Wakeup } from './wakeup.js';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface StreamPumpOptions {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  tableName: string;
  handler: StreamHandler;
  /** The consumer's filter (Lambda FilterCriteria syntax); records it does not match are skipped and checkpointed. */
  filter: Parameters<typeof matchesStreamFilter>[1];
  /** Where the per-shard positions are kept across restarts; none: every start reads from the oldest record. */
  checkpointFile?: string;
  /** The pause between reads while records keep coming. @default 50 */
  pollMs?: number;
  /**
   * The longest pause when the stream is quiet: each read that finds nothing doubles the pause from
   * `pollMs` up to this; `wake()` ends it at once. @default 1000
   */
  idleMs?: number;
  /** Records per handler call. @default 100 (the deployed event source's batch size) */
  batchSize?: number;
  onError?: (error: unknown) => void;
}

export interface StreamPump {
  /** Something may have written to the table: read the stream now (at most every `pollMs`). */
  wake(): void;
  stop(): Promise<void>;
}

/** How long the pump keeps its quick pace after a wake. */
const QUICK_AFTER_WAKE_MS = 1_000;

/** Backoff of a failing batch: 100 ms, doubling, at most 5 s; it is retried forever, never skipped. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;
/** How often the shard list is read again (new shards appear when DynamoDB Local rolls one over). */
const DISCOVER_EVERY_MS = 1_000;

interface ShardState {
  shard: Shard;
  iterator?: string;
  /** The last record handled (or skipped by the filter): a new iterator starts after it. */
  after?: string;
  /** Read to its end (the shard is closed): its children may start. */
  done: boolean;
  /** Records read but not yet handled successfully, oldest first. */
  pending: StreamRecord[];
  retryAt: number;
  retryMs: number;
}

interface Checkpoint {
  streamArn: string;
  shards: Record<string, { after?: string; done?: true }>;
}

/**
 * Feeds a table's DynamoDB Stream to a stream handler the way Lambda's event source mapping with
 * TRIM_HORIZON, FilterCriteria and ReportBatchItemFailures does: every shard in order (a child only
 * after its parent is read to the end), batches of matching records in Lambda's record shape, and on
 * a failure the same records again from the first failed one, with backoff, never skipping one. The
 * position per shard is written to `checkpointFile` after every batch, so a restarted stack resumes
 * where it stopped (at-least-once: a batch handled just before a crash may be handled again).
 */
export async function startStreamPump(options: StreamPumpOptions): Promise<StreamPump> {
  const { endpoint, region, credentials } = options;
  const table = new DynamoDBClient({ endpoint, region, credentials });
  const { Table: description } = await table.send(new DescribeTableCommand({ TableName: options.tableName }));
  table.destroy();
  const streamArn = description?.LatestStreamArn;
  if (!streamArn) throw new Error(`Table ${options.tableName} has no stream to pump.`);
  const streams = new DynamoDBStreamsClient({ endpoint, region, credentials });
  const pollMs = options.pollMs ?? 50;
  const idleMs = Math.max(pollMs, options.idleMs ?? 1_000);
  const woken = new Wakeup();
  const batchSize = options.batchSize ?? 100;
  const saved = readCheckpoint(options.checkpointFile, streamArn);
  const shards = new Map<string, ShardState>();
  let running = true;
  let discoveredAt = 0;

  const save = () => {
    if (!options.checkpointFile) return;
    const checkpoint: Checkpoint = { streamArn, shards: {} };
    for (const [id, state] of shards)
      checkpoint.shards[id] = { ...(state.after ? { after: state.after } : {}), ...(state.done ? { done: true as const } : {}) };
    writeFileSync(`${options.checkpointFile}.tmp`, `${JSON.stringify(checkpoint)}\n`);
    renameSync(`${options.checkpointFile}.tmp`, options.checkpointFile);
  };

  const discover = async () => {
    let exclusiveStart: string | undefined;
    do {
      const { StreamDescription: stream } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStart }),
      );
      for (const shard of stream?.Shards ?? []) {
        if (shards.has(shard.ShardId!)) continue;
        const known = saved.shards[shard.ShardId!];
        shards.set(shard.ShardId!, {
          shard,
          after: known?.after,
          done: known?.done === true,
          pending: [],
          retryAt: 0,
          retryMs: RETRY_FIRST_MS,
        });
      }
      exclusiveStart = stream?.LastEvaluatedShardId;
    } while (exclusiveStart);
    discoveredAt = Date.now();
  };

  // A parent the stream no longer lists (trimmed) has nothing left to read.
  const ready = (state: ShardState) => {
    const parent = state.shard.ParentShardId ? shards.get(state.shard.ParentShardId) : undefined;
    return !state.done && (parent === undefined || parent.done);
  };

  const iteratorOf = async (state: ShardState): Promise<string> => {
    const position = state.after
      ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: state.after }
      : { ShardIteratorType: 'TRIM_HORIZON' as const };
    const answer = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: state.shard.ShardId!, ...position }));
    return answer.ShardIterator!;
  };

  /** Reads what is new on a shard into `pending` (nothing while a failed batch waits); answers how many records came. */
  const read = async (state: ShardState): Promise<number> => {
    if (state.pending.length > 0) return 0;
    let answer;
    for (let attempt = 1; ; attempt += 1) {
      state.iterator ??= await iteratorOf(state);
      try {
        answer = await streams.send(new GetRecordsCommand({ ShardIterator: state.iterator, Limit: 1000 }));
        break;
      } catch (error) {
        // An iterator the stream no longer takes is replaced at once (from after the last record
        // handled): an expired one (unused for 15 minutes), or, in DynamoDB Local, one it gave out
        // while the shard was still empty, which it refuses with TrimmedDataAccessException once
        // writes to other tables have moved the sequence numbers on before the shard's first record.
        if (!(error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException) || attempt > 1) throw error;
        state.iterator = undefined;
      }
    }
    state.pending = answer.Records ?? [];
    if (answer.NextShardIterator) state.iterator = answer.NextShardIterator;
    else if (state.pending.length === 0) {
      state.done = true;
      save();
    } else state.iterator = undefined;
    return state.pending.length;
  };

  /** Hands pending records to the handler, a batch at a time, until all are handled or one fails. */
  const deliver = async (state: ShardState) => {
    while (state.pending.length > 0 && running && Date.now() >= state.retryAt) {
      const chunk = state.pending.slice(0, batchSize);
      const matching = chunk
        .map((record) => toLambdaRecord(record, streamArn, region))
        .filter((record) => matchesStreamFilter(record as FilterableStreamRecord, options.filter));
      let handled = chunk.length;
      if (matching.length > 0) {
        try {
          const response = await options.handler({ Records: matching });
          const failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
          const firstFailed = chunk.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
          if (firstFailed >= 0) handled = firstFailed;
          // As Lambda does: a failure naming no record of the batch fails the whole batch.
          else if (failed.size > 0) handled = 0;
        } catch (error) {
          options.onError?.(error);
          handled = 0;
        }
      }
      if (handled > 0) {
        state.after = chunk[handled - 1]!.dynamodb!.SequenceNumber!;
        state.pending = state.pending.slice(handled);
        save();
      }
      if (handled < chunk.length) {
        state.retryAt = Date.now() + state.retryMs;
        state.retryMs = Math.min(RETRY_MAX_MS, state.retryMs * 2);
        return;
      }
      state.retryMs = RETRY_FIRST_MS;
    }
    // A shard whose iterator ran out with records still pending restarts after the last one handled.
    if (state.pending.length === 0 && state.iterator === undefined && !state.done) state.iterator = await iteratorOf(state);
  };

  // Set by wake(): DynamoDB Local's stream can show a record some milliseconds after its write
  // answered, so the pump keeps its quick pace for a while after a wake, not just one read.
  let quickUntil = 0;
  const loop = (async () => {
    let pause = pollMs;
    while (running) {
      let busy = false;
      try {
        if (Date.now() - discoveredAt >= DISCOVER_EVERY_MS) await discover();
        for (const state of shards.values()) {
          if (!running) break;
          if (!ready(state)) continue;
          if ((await read(state)) > 0) busy = true;
          await deliver(state);
          // A batch waiting for its retry keeps the pump at its quick pace.
          if (state.pending.length > 0) busy = true;
        }
      } catch (error) {
        if (!running) break;
        options.onError?.(error);
      }
      // Quick while records come and for QUICK_AFTER_WAKE_MS after a wake; when quiet, a pause
      // doubling up to idleMs that a wake ends early.
      pause = busy || Date.now() < quickUntil ? pollMs : Math.min(idleMs, pause * 2);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      if (pause > pollMs && running) await woken.sleep(pause - pollMs);
    }
  })();

  return {
    wake: () => {
      quickUntil = Date.now() + QUICK_AFTER_WAKE_MS;
      woken.wake();
    },
    stop: async () => {
      running = false;
      woken.wakeAll();
      await loop;
      streams.destroy();
    },
  };
}

function readCheckpoint(file: string | undefined, streamArn: string): Checkpoint {
  if (!file || !existsSync(file)) return { streamArn, shards: {} };
  try {
    const checkpoint = JSON.parse(readFileSync(file, 'utf8')) as Checkpoint;
    // Another stream (the table was made again): its positions mean nothing here.
    return checkpoint.streamArn === streamArn ? checkpoint : { streamArn, shards: {} };
  } catch {
    return { streamArn, shards: {} };
  }
}

/** A stream record as Lambda hands it to a function: creation time in epoch seconds, the source ARN. */
function toLambdaRecord(record: StreamRecord, streamArn: string, region: string): DynamoDBRecord {
  const { ApproximateCreationDateTime: created, ...rest } = record.dynamodb ?? {};
  return {
    eventID: record.eventID,
    eventName: record.eventName as DynamoDBRecord['eventName'],
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    // DynamoDB Local says `ddblocal`; Lambda names the region the stream is in.
    awsRegion: region,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(rest as DynamoDBRecord['dynamodb']),
      ...(created ? { ApproximateCreationDateTime: Math.floor(new Date(created).getTime() / 1000) } : {}),
    },
  };
}
