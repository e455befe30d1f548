import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { createQueueWorker, defineJob } from '../../shared/events/queue-worker.js';
import { sqsRecord } from '../support/sqs-events.js';

const record = (messageId: string, body: unknown) => sqsRecord(JSON.stringify(body), { messageId });

describe('createQueueWorker picks a job by its type', () => {
  const ran: string[] = [];
  const jobs = {
    echo: defineJob({ schema: v.object({ type: v.literal('echo'), id: v.string() }), run: async (job) => void ran.push(job.id) }),
  };

  it('fails a message naming a property every object inherits (constructor, toString, __proto__) as an unknown job, and runs the rest', async () => {
    const worker = createQueueWorker('test', jobs);

    const result = await worker({
      Records: [
        record('a', { type: 'constructor' }),
        record('b', { type: 'echo', id: 'ran' }),
        record('c', { type: 'toString' }),
        record('d', { type: '__proto__' }),
      ],
    });

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'a' }, { itemIdentifier: 'c' }, { itemIdentifier: 'd' }]);
    expect(ran).toEqual(['ran']);
  });

  it('takes the type from jobTypeOf for messages of another shape', async () => {
    const worker = createQueueWorker('test', jobs, {
      jobTypeOf: (message) => ((message as { kind?: string }).kind === 'ping' ? 'echo' : undefined),
    });

    const result = await worker({
      Records: [record('e', { kind: 'ping', type: 'echo', id: 'pinged' }), record('f', { type: 'echo', id: 'not a ping' })],
    });

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'f' }]);
    expect(ran).toContain('pinged');
    expect(ran).not.toContain('not a ping');
  });
});
