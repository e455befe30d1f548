import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { QueueJournal } from '../../infra/local/sqs-journal.js';

const dirs: string[] = [];
const journalFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-journal-'));
  dirs.push(dir);
  return join(dir, 'sqs-journal.jsonl');
};

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('QueueJournal (the local queues on disk)', () => {
  it('answers durable() once what was appended is in the file, and a journal opened again holds the live messages: moved ones where they went, received ones with their count', async () => {
    const file = journalFile();
    const journal = new QueueJournal(file);
    const now = Date.now();
    journal.put('a', 'Work', { MessageBody: 'a' }, now, now + HOUR);
    journal.put('b', 'Work', { MessageBody: 'b' }, now + 5_000, now + HOUR);
    journal.put('c', 'Work', { MessageBody: 'c' }, now, now + HOUR);
    journal.received('a', 1);
    journal.deleted('c');
    // The emulator dead-letters `b` under its id: it moves.
    journal.put(
      'b',
      'Work-dlq',
      { MessageBody: 'b', MessageSystemAttributes: { DeadLetterQueueSourceArn: { DataType: 'String', StringValue: 'arn' } } },
      now,
      now + 2 * HOUR,
    );
    journal.put('gone', 'Other', { MessageBody: 'x' }, now, now + HOUR);
    journal.cleared('Other');
    const pending = journal.durable();
    await pending;
    const written = lines(file).length;
    await journal.close();

    const again = new QueueJournal(file);

    expect(pending).toBeInstanceOf(Promise);
    expect(written).toBe(8);
    expect(journal.durable()).toBeUndefined();
    expect([...again.live()]).toEqual([
      ['a', { queue: 'Work', message: { MessageBody: 'a' }, visibleAt: now, expiresAt: now + HOUR, receiveCount: 1 }],
      [
        'b',
        {
          queue: 'Work-dlq',
          message: { MessageBody: 'b', MessageSystemAttributes: { DeadLetterQueueSourceArn: { DataType: 'String', StringValue: 'arn' } } },
          visibleAt: now,
          expiresAt: now + 2 * HOUR,
          receiveCount: 0,
        },
      ],
    ]);
    // Rewritten at the start as the live messages only.
    expect(lines(file)).toHaveLength(2);
    await again.close();
  });

  it('skips a torn last line and messages past their retention', async () => {
    const file = journalFile();
    const journal = new QueueJournal(file);
    const now = Date.now();
    journal.put('kept', 'Work', { MessageBody: 'kept' }, now, now + HOUR);
    journal.put('expired', 'Work', { MessageBody: 'old' }, now - 2 * HOUR, now - HOUR);
    await journal.close();
    appendFileSync(file, '{"op":"del","id":"ke');

    const again = new QueueJournal(file);

    expect([...again.live().keys()]).toEqual(['kept']);
    await again.close();
  });

  it('rewrites itself as the live messages when it grows past 10,000 entries and four times what it holds, losing none', async () => {
    const file = journalFile();
    const journal = new QueueJournal(file);
    const now = Date.now();
    for (let i = 0; i < 6_000; i++) {
      journal.put(`m${i}`, 'Work', { MessageBody: String(i) }, now, now + HOUR);
      if (i % 100 !== 0) journal.deleted(`m${i}`);
    }
    await journal.durable();
    journal.put('last', 'Work', { MessageBody: 'last' }, now, now + HOUR);
    await journal.durable();
    const size = lines(file).length;
    await journal.close();

    const again = new QueueJournal(file);

    expect(size).toBeLessThan(1_000);
    expect(again.live().size).toBe(61);
    expect(again.live().has('last')).toBe(true);
    await again.close();
  });
});
