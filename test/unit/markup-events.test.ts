import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.js';
import { eventItem, eventItems, eventsOfItem } from '../../shared/db/events.js';
import {
  inMarkupTurn,
  markupEventLogKey,
  namesMarkupEvents,
  sequenceMarkupEvents,
  type KnownHeads,
} from '../../shared/db/markup-events.js';
import { putNew, type TransactItem } from '../../shared/db/core/transact.js';
import { matchesStreamFilter } from '../../shared/events/outbox-stream.js';
import { marshall } from '@aws-sdk/util-dynamodb';

beforeAll(() => {
  process.env.TABLE_NAME ??= 'unit-table';
  resetConfig();
});

const WS = randomUUID();
const known = (entries: [string, number, boolean][]): KnownHeads =>
  new Map(entries.map(([id, lastSeq, stored]) => [id, { lastSeq, stored }]));
const markupPut = (id: string) => putNew({ PK: `ITEM#${id}`, SK: 'ITEM', entity: 'Markup', id, workspaceId: WS });
const other: TransactItem = {
  Update: { TableName: 'unit-table', Key: { PK: 'X', SK: 'Y' }, UpdateExpression: 'SET a = :a', ExpressionAttributeValues: { ':a': 1 } },
};

describe('numbering a markup’s events inside the transaction of the change (issue 32)', () => {
  it('leaves a transaction without markup events alone', async () => {
    const items = [other, eventItem({ type: 'comment_created', workspaceId: WS })];
    expect(namesMarkupEvents(items)).toBe(false);
  });

  it("numbers an event after its markup's head, keeps the caller's items at their indexes and appends the head's conditional update and the log entry", async () => {
    const markupId = randomUUID();
    const event = eventItem({ type: 'comment_created', workspaceId: WS, markupId, threadId: randomUUID() });
    const items = [other, event];
    const before = JSON.stringify(items);

    const { items: numbered } = await sequenceMarkupEvents(items, known([[markupId, 4, true]]));

    expect(JSON.stringify(items)).toBe(before);
    expect(numbered).toHaveLength(4);
    expect(numbered[0]).toBe(other);
    expect(numbered[1]!.Put!.Item).toEqual({ ...event.Put!.Item, seq: 5 });
    expect(numbered[1]!.Put!.ConditionExpression).toBe('attribute_not_exists(PK)');
    expect(numbered[2]!.Update).toMatchObject({
      Key: { PK: `MARKUP#${markupId}`, SK: 'EVENTSEQ' },
      ConditionExpression: 'lastSeq = :read',
      ExpressionAttributeValues: { ':read': 4, ':next': 5 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    const log = numbered[3]!.Put!;
    expect(log.ConditionExpression).toBeUndefined();
    expect(log.Item).toMatchObject({
      ...markupEventLogKey(markupId, 5),
      entity: 'MarkupEvent',
      markupId,
      seq: 5,
      event: { ...eventsOfItem(event.Put!.Item!)[0], seq: 5 },
    });
    expect(log.Item!.SK).toBe('SEQ#000000000005');
    const createdAt = Date.parse(event.Put!.Item!.createdAt as string) / 1000;
    expect(log.Item!.expiresAtEpoch).toBe(Math.floor(createdAt) + 30 * 24 * 3600);
  });

  it('creates the head of a markup that has none, after the events of its creation', async () => {
    const markupId = randomUUID();
    const { items } = await sequenceMarkupEvents(
      [eventItem({ type: 'markup_ready', workspaceId: WS, markupId })],
      known([[markupId, 1, false]]),
    );
    expect(items[0]!.Put!.Item!.seq).toBe(2);
    expect(items[1]!.Update).toMatchObject({
      ConditionExpression: 'attribute_not_exists(PK)',
      ExpressionAttributeValues: { ':next': 2, ':entity': 'MarkupEventHead', ':markup': markupId },
    });
  });

  it('puts the events of markups created in the transaction on their own Puts (seq 1), with no head and no log item: bulk creation of 50 costs no item', async () => {
    const ids = Array.from({ length: 50 }, () => randomUUID());
    const items = [
      ...ids.map(markupPut),
      ...eventItems(ids.map((markupId) => ({ type: 'markup_created' as const, workspaceId: WS, markupId }))),
    ];

    const { items: numbered } = await sequenceMarkupEvents(items);

    expect(numbered).toHaveLength(51);
    const batch = numbered[50]!.Put!.Item!;
    expect(batch.entity).toBe('EventBatch');
    expect((batch.events as { markupId: string; seq: number }[]).map((event) => [event.markupId, event.seq])).toEqual(
      ids.map((id) => [id, 1]),
    );
    ids.forEach((id, index) => {
      const created = numbered[index]!.Put!.Item!.createdEvents as { id: string; seq: number; type: string }[];
      expect(created).toEqual([(batch.events as unknown[])[index]]);
      expect(created[0]).toMatchObject({ seq: 1, type: 'markup_created' });
    });
  });

  it('numbers several events of one markup in one transaction consecutively', async () => {
    const markupId = randomUUID();
    const items = [
      eventItem({ type: 'comment_resolved', workspaceId: WS, markupId, threadId: randomUUID() }),
      eventItem({ type: 'comment_updated', workspaceId: WS, markupId, threadId: randomUUID() }),
    ];
    const { items: numbered } = await sequenceMarkupEvents(items, known([[markupId, 9, true]]));
    expect(numbered.map((item) => item.Put?.Item?.seq ?? item.Update?.ExpressionAttributeValues?.[':next'])).toEqual([10, 11, 11, 10, 11]);
  });

  it('learns the head that stands from a failed condition (DynamoDB hands the item back unmarshalled)', async () => {
    const markupId = randomUUID();
    const numbered = await sequenceMarkupEvents(
      [other, eventItem({ type: 'comment_created', workspaceId: WS, markupId })],
      known([[markupId, 4, true]]),
    );
    const standing = marshall({ PK: `MARKUP#${markupId}`, SK: 'EVENTSEQ', lastSeq: 7 });
    expect(
      numbered
        .headsAfterFailure([{ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed', Item: standing }, { Code: 'None' }])
        .get(markupId),
    ).toEqual({ lastSeq: 7, stored: true });
    // Not handed back (a conflict, or a head gone with its markup): read again.
    expect(
      numbered.headsAfterFailure([{ Code: 'None' }, { Code: 'None' }, { Code: 'TransactionConflict' }, { Code: 'None' }]).has(markupId),
    ).toBe(false);
    expect(
      numbered.headsAfterFailure([{ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }, { Code: 'None' }]).has(markupId),
    ).toBe(false);
    // Only a caller's item failed: the head stands as read.
    expect(
      numbered.headsAfterFailure([{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }, { Code: 'None' }, { Code: 'None' }]).get(markupId),
    ).toEqual({ lastSeq: 4, stored: true });
  });

  it("remembers the heads a committed transaction moved, so this process's next change on the markup reads none", async () => {
    const markupId = randomUUID();
    const first = await sequenceMarkupEvents(
      [eventItem({ type: 'comment_created', workspaceId: WS, markupId })],
      known([[markupId, 4, true]]),
    );
    first.committed();
    // No head is given and none could be read here (no table): the remembered one numbers it.
    const second = await sequenceMarkupEvents([eventItem({ type: 'comment_updated', workspaceId: WS, markupId })]);
    expect(second.items[0]!.Put!.Item!.seq).toBe(6);
    expect(second.items[1]!.Update!.ExpressionAttributeValues).toMatchObject({ ':read': 5, ':next': 6 });
  });
});

describe('turns on a markup within one process', () => {
  const itemsOn = (markupId: string) => [eventItem({ type: 'comment_created', workspaceId: WS, markupId })];
  const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

  it('runs the changes of one markup one after the other, and those of other markups alongside', async () => {
    const one = randomUUID();
    const two = randomUUID();
    const trace: string[] = [];
    const work = (name: string) => async () => {
      trace.push(`${name} start`);
      await pause();
      trace.push(`${name} end`);
    };
    await Promise.all([
      inMarkupTurn(itemsOn(one), work('a')),
      inMarkupTurn(itemsOn(one), work('b')),
      inMarkupTurn(itemsOn(two), work('c')),
    ]);
    expect(trace.indexOf('b start')).toBeGreaterThan(trace.indexOf('a end'));
    expect(trace.indexOf('c start')).toBeLessThan(trace.indexOf('a end'));
  });

  it('passes the turn on when a change fails', async () => {
    const markupId = randomUUID();
    const failed = inMarkupTurn(itemsOn(markupId), async () => {
      throw new Error('condition failed');
    });
    await expect(failed).rejects.toThrow('condition failed');
    await expect(inMarkupTurn(itemsOn(markupId), async () => 'next')).resolves.toBe('next');
  });
});

describe('the stream filter of the webhook fan-out', () => {
  const insert = (item: Record<string, unknown>) => ({
    eventName: 'INSERT',
    dynamodb: { NewImage: marshall(item, { removeUndefinedValues: true }) as never },
  });

  it('matches outbox items and none of the log’s items, so the fan-out is never invoked for them', async () => {
    const markupId = randomUUID();
    const [event, batch] = [
      eventItem({ type: 'comment_created', workspaceId: WS, markupId }),
      eventItems([
        { type: 'markup_created', workspaceId: WS, markupId },
        { type: 'markup_created', workspaceId: WS, markupId: randomUUID() },
      ])[0]!,
    ];
    const { items } = await sequenceMarkupEvents([event], known([[markupId, 0, false]]));
    expect(matchesStreamFilter(insert(items[0]!.Put!.Item!))).toBe(true);
    expect(matchesStreamFilter(insert(batch.Put!.Item!))).toBe(true);
    const head = { ...items[1]!.Update!.Key, entity: 'MarkupEventHead', lastSeq: 1, markupId };
    expect(matchesStreamFilter(insert(head))).toBe(false);
    expect(matchesStreamFilter(insert(items[2]!.Put!.Item!))).toBe(false);
  });
});
