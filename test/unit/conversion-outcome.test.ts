import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.js';
import { resetMetrics } from '../../shared/metrics.js';
import { ConversionError } from '../../shared/convert/errors.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import {
  afterLostRace,
  diedWithOriginal,
  failedOutcome,
  INTERNAL_FAILURE_MESSAGE,
  MarkupDeleted,
  markReady,
  readyOutcome,
  reopenedOutcome,
  runVerdict,
  stillPending,
  type Converted,
} from '../../shared/domain/markups/conversion-outcome.js';
import { useFakeDb, type SentCommand } from '../support/fake-db.js';

/** Issue 33 item 4: what a conversion's result does to its markup (shared/domain/markups/conversion-outcome.ts), without emulators. */

const NOW = 1_800_000_000_000;

function markup(fields: Partial<MarkupRecord> = {}): MarkupRecord {
  return {
    kind: 'markup',
    id: 'm-1',
    type: 'pdf',
    workspaceId: 'ws-a',
    organizationId: 'org-1',
    parentFolderId: 'root-a',
    name: 'Plan.pdf',
    createdAt: NOW - 60_000,
    modifiedAt: NOW - 60_000,
    activityAt: NOW - 60_000,
    isReady: false,
    conversionStatus: 'pending',
    hasRetainedOriginal: true,
    source: { key: 'uploads/f-1', filename: 'Plan.pdf', mimeType: 'application/pdf' },
    ...fields,
  } as MarkupRecord;
}

const pages = (n: number) => ({ pageCount: n, pages: Array.from({ length: n }, (_, i) => ({ number: i + 1, width: 100, height: 200 })) });
const converted = (thumbnail: Converted['thumbnail']): Converted => ({
  changes: { document: pages(2) } as Converted['changes'],
  category: 'pdfs',
  bytes: 2048,
  thumbnail,
});

describe('which state a markup moves to for each result of a run', () => {
  it('a converted file makes it ready, with its outputs and thumbnail, no error, modified now', () => {
    const ready = readyOutcome(markup({ conversionError: 'old' }), converted({ key: 'thumbs/m-1' }), NOW);

    expect(ready).toMatchObject({
      isReady: true,
      conversionStatus: 'ready',
      conversionError: undefined,
      modifiedAt: NOW,
      document: pages(2),
    });
    expect(ready).toMatchObject({ thumbnailState: 'ready', thumbnailKey: 'thumbs/m-1', thumbnailError: undefined });
  });

  it('a converted file whose thumbnail could not be made is ready, its thumbnail unavailable with the reason', () => {
    const ready = readyOutcome(markup(), converted({ error: 'No page to make a thumbnail from.' }), NOW);

    expect(ready).toMatchObject({
      conversionStatus: 'ready',
      thumbnailState: 'unavailable',
      thumbnailError: 'No page to make a thumbnail from.',
    });
    expect(ready).not.toHaveProperty('thumbnailKey');
  });

  it('a failure is final: done (isReady), nothing converted kept, the reason as the error and as why there is no thumbnail', () => {
    const failed = failedOutcome(
      markup({ document: pages(3), thumbnailKey: 'thumbs/m-1', thumbnailState: 'ready' }),
      'The file took too long to convert.',
      NOW,
    );

    expect(failed).toMatchObject({
      isReady: true,
      conversionStatus: 'failed',
      conversionError: 'The file took too long to convert.',
      modifiedAt: NOW,
    });
    expect(failed).toMatchObject({
      document: undefined,
      video: undefined,
      thumbnailState: 'unavailable',
      thumbnailKey: undefined,
      thumbnailError: 'The file took too long to convert.',
    });
    expect(failed).not.toHaveProperty('images');
    expect(failedOutcome(markup({ type: 'image', images: [{ id: 'i' }] as MarkupRecord['images'] }), 'bad', NOW).images).toEqual([]);
  });

  it('a run that threw: deleted meanwhile, a file that cannot be converted (failed for good), the last delivery (internal failure, thrown), or retried', () => {
    expect(runVerdict(new MarkupDeleted('gone'), false)).toEqual({ kind: 'deleted' });
    expect(runVerdict(new MarkupDeleted('gone'), true)).toEqual({ kind: 'deleted' });
    expect(runVerdict(new ConversionError('The PDF has more than 500 pages.'), false)).toEqual({
      kind: 'failed',
      reason: 'The PDF has more than 500 pages.',
    });
    expect(runVerdict(new ConversionError('The PDF has more than 500 pages.'), true)).toEqual({
      kind: 'failed',
      reason: 'The PDF has more than 500 pages.',
    });
    expect(runVerdict(new Error('socket hang up'), true)).toEqual({ kind: 'failed-last-delivery', reason: INTERNAL_FAILURE_MESSAGE });
    expect(runVerdict(new Error('socket hang up'), false)).toEqual({ kind: 'retry' });
  });

  it('a dead conversion (internal failure) whose original is kept may run again, pending as before its first run; a file that could not be converted may not', () => {
    const dead = markup({
      isReady: true,
      conversionStatus: 'failed',
      conversionError: INTERNAL_FAILURE_MESSAGE,
      thumbnailError: INTERNAL_FAILURE_MESSAGE,
    });

    expect(diedWithOriginal(dead)).toBe(true);
    expect(diedWithOriginal({ ...dead, hasRetainedOriginal: false })).toBe(false);
    expect(diedWithOriginal({ ...dead, source: undefined })).toBe(false);
    expect(diedWithOriginal({ ...dead, conversionError: 'The file is not a PDF.' })).toBe(false);
    expect(diedWithOriginal({ ...dead, conversionStatus: 'ready' })).toBe(false);
    expect(reopenedOutcome(dead, NOW)).toMatchObject({
      isReady: false,
      conversionStatus: 'pending',
      conversionError: undefined,
      thumbnailError: undefined,
      modifiedAt: NOW,
    });
  });

  it('after a settling write failed: a markup still pending is settled again where it is now; deleted or settled by another run is not', () => {
    expect(stillPending(markup({ workspaceId: 'ws-b' }))).toEqual(markup({ workspaceId: 'ws-b' }));
    expect(stillPending(undefined)).toBeUndefined();
    expect(stillPending(markup({ conversionStatus: 'ready' }))).toBeUndefined();
    expect(stillPending(markup({ conversionStatus: 'failed' }))).toBeUndefined();
  });

  it('a run that lost the race keeps its outputs when another run made the markup ready, empties the prefix when it was deleted, else removes its outputs', () => {
    expect(afterLostRace('ready')).toBe('keep');
    expect(afterLostRace('deleted')).toBe('delete-prefix');
    expect(afterLostRace('failed')).toBe('delete-outputs');
    expect(afterLostRace(undefined)).toBe('delete-outputs');
  });
});

describe('the settling write, through the clients seam (a fake DynamoDB)', () => {
  let restore: (() => void) | undefined;
  const metricsSwitch = process.env.POWERTOOLS_METRICS_DISABLED;
  beforeAll(() => {
    process.env.TABLE_NAME ??= 'unit-table';
    resetConfig();
    // The settled outcome is counted (EMF lines on stdout): not here.
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    resetMetrics();
  });
  afterAll(() => {
    if (metricsSwitch === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = metricsSwitch;
    resetMetrics();
  });
  afterEach(() => restore?.());

  /** A DynamoDB where the markup is pending in `where()` and every transaction conditioned on another workspace is cancelled. */
  function tableWithMarkupIn(where: () => string) {
    const fake = useFakeDb((command: SentCommand) => {
      if (command.name === 'GetCommand') {
        const key = command.input.Key as { SK: string };
        if (key.SK === 'EVENTSEQ') return { Item: { lastSeq: 7 } };
        return { Item: { PK: 'ITEM#m-1', SK: 'ITEM', ...markup({ workspaceId: where(), hasRetainedOriginal: false }) } };
      }
      if (command.name === 'TransactWriteCommand') {
        const [update] = command.input.TransactItems as { Update: { ExpressionAttributeValues: Record<string, unknown> } }[];
        if (update!.Update.ExpressionAttributeValues[':ws'] === where()) return {};
        const items = command.input.TransactItems as unknown[];
        throw new TransactionCanceledException({
          message: 'Transaction cancelled',
          $metadata: {},
          CancellationReasons: items.map((_, i) => ({ Code: i === 0 ? 'ConditionalCheckFailed' : 'None' })),
        });
      }
      throw new Error(`unexpected ${command.name}`);
    });
    restore = fake.restore;
    return fake;
  }
  const transactions = (sent: SentCommand[]) => sent.filter((command) => command.name === 'TransactWriteCommand');
  const outputs = { deleted: 0, deleteAll: async () => void (outputs.deleted += 1) };

  it('a markup moved to another workspace while the run finished is read again and made ready there, its markup_ready naming where it is now', async () => {
    let workspace = 'ws-a';
    const db = tableWithMarkupIn(() => workspace);
    workspace = 'ws-b';

    await markReady(markup(), converted({ key: 'thumbs/m-1' }), outputs);

    const [first, second] = transactions(db.sent);
    expect(transactions(db.sent)).toHaveLength(2);
    const eventOf = (command: SentCommand) =>
      (command.input.TransactItems as { Put?: { Item: Record<string, unknown> } }[]).find((item) => item.Put?.Item.entity === 'Event')!.Put!
        .Item;
    expect(eventOf(first!)).toMatchObject({ type: 'markup_ready', workspaceId: 'ws-a', markupId: 'm-1' });
    expect(eventOf(second!)).toMatchObject({ type: 'markup_ready', workspaceId: 'ws-b', markupId: 'm-1' });
    expect(outputs.deleted).toBe(0);
  });

  it('gives up with an error after five writes when the markup keeps moving between workspaces', async () => {
    let moves = 0;
    const db = tableWithMarkupIn(() => `ws-${(moves += 1)}`);

    await expect(markReady(markup({ workspaceId: 'ws-0' }), converted({ key: 'thumbs/m-1' }), outputs)).rejects.toThrow(
      'Markup m-1 kept moving between workspaces while its conversion finished.',
    );
    expect(transactions(db.sent)).toHaveLength(5);
  });
});
