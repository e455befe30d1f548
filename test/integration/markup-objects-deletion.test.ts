import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { convertMarkupJob } from '../../functions/conversion/convert-markup.js';
import { handleDeadLetters } from '../../functions/conversion/dead-letters.js';
import { renderThumbnailJob } from '../../functions/thumbnail-renderer/render-thumbnail.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getDb, getS3 } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getItem, itemKey, type MarkupRecord } from '../../shared/db/items.js';
import { markDeletionQueued } from '../../shared/db/pending-work.js';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { batchDelete } from '../../shared/db/core/transact.js';
import { deleteItemRecords } from '../../shared/domain/items/deletion.js';
import { sweepPendingWork } from '../../shared/domain/markups/pending-work.js';
import { markupObjectPrefix } from '../../shared/storage/objects.js';
import { call } from '../support/api.js';
import {
  conversionClients,
  deliveryRecord as record,
  keysUnder as keysIn,
  makePendingMarkup as makePending,
  type Upload,
} from '../support/conversion-jobs.js';
import { makeMarkup, workspaceOf } from '../support/items.js';
import { eventually } from '../support/polling.js';
import { withQueuesCut } from '../support/sqs-events.js';
import { makePdf } from '../support/sample-files.js';

const clients = conversionClients();
const { services, sqs, s3 } = clients;
const keysUnder = (prefix: string) => keysIn(clients, prefix);

afterAll(() => {
  sqs.destroy();
  s3.destroy();
});

const PAGES = 4;

async function pendingPdf() {
  const upload: Upload = {
    type: 'pdf',
    bytes: await makePdf(Array.from({ length: PAGES }, () => ({ width: 200, height: 260 }))),
    filename: 'board.pdf',
    mimeType: 'application/pdf',
  };
  return makePending(clients, upload);
}

/**
 * Runs `work` while this process's S3 client calls `onPut` before each PutObject of a key under
 * `prefix` (the conversion job runs in this process, so it can be held or made to die at any page).
 */
async function withPutHook<T>(prefix: string, onPut: (key: string) => Promise<void>, work: () => Promise<T>): Promise<T> {
  const name = `put-hook-${randomUUID()}`;
  getS3().middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { Key?: string; Body?: unknown; UploadId?: unknown };
      if (input.Key?.startsWith(prefix) && input.Body !== undefined) await onPut(input.Key);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return await work();
  } finally {
    getS3().middlewareStack.remove(name);
  }
}

class Killed extends Error {}

/** Runs the job until it is about to store page `page`, where it dies (as a killed worker would): the pages before it stay stored. */
async function runUntilDeath(markupId: string, page: number): Promise<void> {
  const prefix = markupObjectPrefix(markupId);
  await withPutHook(
    prefix,
    async (key) => {
      if (key === `${prefix}pages/${page}.png`) throw new Killed(`killed before ${key}`);
    },
    () =>
      convertMarkupJob.run({ type: 'convert-markup', markupId }, record(1)).then(
        () => {
          throw new Error('the job was expected to die');
        },
        (error: unknown) => {
          if (!(error instanceof Killed)) throw error;
        },
      ),
  );
}

const deleteMarkup = (orgKey: string, markupId: string) => call('DELETE', `/markups/${markupId}`, { key: orgKey });

describe('deleting a markup takes every object under its prefix (DESIGN.md "Deletion takes everything")', () => {
  it('removes the pages a conversion stored before it died, and counts nothing', async () => {
    const { org, markup } = await pendingPdf();
    await runUntilDeath(markup.id, 3);
    const left = await keysUnder(markupObjectPrefix(markup.id));

    const deleted = await deleteMarkup(org.orgKey, markup.id);

    expect(left).toEqual(expect.arrayContaining([`markups/${markup.id}/pages/1.png`, `markups/${markup.id}/pages/2.png`]));
    expect(deleted.status).toBe(204);
    expect(
      await eventually(
        () => keysUnder(markupObjectPrefix(markup.id)),
        (keys) => keys.length === 0,
      ),
    ).toEqual([]);
    expect(await getStorageBreakdown(org.organizationId)).toMatchObject({ pdfs: 0, total: 0 });
  });

  it('a redelivered job of a markup deleted after its run died removes what that run stored (the markup-gone branch)', async () => {
    const { markup } = await pendingPdf();
    await runUntilDeath(markup.id, 2);
    // The record goes without the deletion's own job, as if that job had listed the prefix first.
    await batchDelete([itemKey(markup.id)]);
    const left = await keysUnder(markupObjectPrefix(markup.id));

    await convertMarkupJob.run({ type: 'convert-markup', markupId: markup.id }, record(2));

    expect(left.length).toBeGreaterThan(0);
    expect(await keysUnder(markupObjectPrefix(markup.id))).toEqual([]);
  });

  it('the dead-letter consumer empties the prefix of a markup deleted while its job was dying', async () => {
    const { markup } = await pendingPdf();
    await runUntilDeath(markup.id, 2);
    await batchDelete([itemKey(markup.id)]);
    const event = {
      Records: [{ messageId: randomUUID(), body: JSON.stringify({ type: 'convert-markup', markupId: markup.id }), attributes: {} }],
    } as unknown as SQSEvent;

    const answer = await handleDeadLetters(event);

    expect(answer.batchItemFailures).toEqual([]);
    expect(await keysUnder(markupObjectPrefix(markup.id))).toEqual([]);
  });

  it('a thumbnail job of a deleted markup removes the thumbnail an earlier run stored', async () => {
    const markupId = randomUUID();
    const key = `${markupObjectPrefix(markupId)}thumbnail.png`;
    await s3.send(new PutObjectCommand({ Bucket: services.bucketName, Key: key, Body: Buffer.from('png'), ContentType: 'image/png' }));

    await renderThumbnailJob.run({ type: 'render-thumbnail', markupId }, record(1));

    expect(await keysUnder(markupObjectPrefix(markupId))).toEqual([]);
  });

  it('leaves nothing and counts nothing whenever the deletion falls during or after the conversion (12 rounds)', async () => {
    for (let round = 0; round < 12; round += 1) {
      const { org, markup } = await pendingPdf();
      const prefix = markupObjectPrefix(markup.id);
      // Rounds 0..PAGES-1 hold the job before that page's store until the deletion answered (the
      // deletion's own job may empty the prefix before or after the held write); later rounds
      // delete once the markup is ready, or while the job runs unheld.
      const holdAt = round < PAGES ? round + 1 : undefined;
      let answered!: () => void;
      const deletionAnswered = new Promise<void>((resolve) => (answered = resolve));
      let reached!: () => void;
      const holdReached = new Promise<void>((resolve) => (reached = resolve));
      const deletion = await withPutHook(
        prefix,
        async (key) => {
          if (holdAt !== undefined && key === `${prefix}pages/${holdAt}.png`) {
            reached();
            await deletionAnswered;
          }
        },
        async () => {
          const running = convertMarkupJob.run({ type: 'convert-markup', markupId: markup.id }, record(1));
          if (holdAt !== undefined) await Promise.race([holdReached, running]);
          else if (round % 2 === 0) await running;
          const answer = await deleteMarkup(org.orgKey, markup.id);
          answered();
          await running;
          return answer;
        },
      );

      expect(deletion.status, `round ${round}`).toBe(204);
      expect(await getItem(markup.id, true), `round ${round}`).toBeUndefined();
      expect(
        await eventually(
          () => keysUnder(prefix),
          (keys) => keys.length === 0,
        ),
        `round ${round}`,
      ).toEqual([]);
      expect(await getStorageBreakdown(org.organizationId), `round ${round}`).toMatchObject({ pdfs: 0, total: 0 });
    }
  }, 240_000);

  it('a conversion stops before its next page once its markup is deleted, and leaves nothing', async () => {
    const { org, markup } = await makePending(clients, {
      type: 'pdf',
      bytes: await makePdf(Array.from({ length: 6 }, () => ({ width: 200, height: 260 }))),
      filename: 'long.pdf',
      mimeType: 'application/pdf',
    });
    const prefix = markupObjectPrefix(markup.id);
    const pagesPut: string[] = [];
    let answered!: () => void;
    const deletionAnswered = new Promise<void>((resolve) => (answered = resolve));
    let reached!: () => void;
    const holdReached = new Promise<void>((resolve) => (reached = resolve));

    const deletion = await withPutHook(
      prefix,
      async (key) => {
        if (key.startsWith(`${prefix}pages/`)) pagesPut.push(key.slice(prefix.length));
        if (key === `${prefix}pages/2.png`) {
          reached();
          await deletionAnswered;
        }
      },
      async () => {
        const running = convertMarkupJob.run({ type: 'convert-markup', markupId: markup.id }, record(1));
        await Promise.race([holdReached, running]);
        const answer = await deleteMarkup(org.orgKey, markup.id);
        answered();
        await running;
        return answer;
      },
    );

    expect(deletion.status).toBe(204);
    expect(pagesPut).toEqual(['pages/1.png', 'pages/2.png']);
    expect(
      await eventually(
        () => keysUnder(prefix),
        (keys) => keys.length === 0,
      ),
    ).toEqual([]);
    expect(await getStorageBreakdown(org.organizationId)).toMatchObject({ pdfs: 0, total: 0 });
  }, 60_000);

  it('a deletion that died before queueing its prefix job leaves a record the sweep finds: the objects go then (both deletion paths)', async () => {
    const { org, markup: pending } = await pendingPdf();
    await runUntilDeath(pending.id, 3);
    const workspace = await workspaceOf(org.workspaceId);
    const webpage = await makeMarkup({
      workspaceId: org.workspaceId,
      organizationId: workspace.organizationId,
      parentFolderId: workspace.rootFolderId,
    });
    await s3.send(
      new PutObjectCommand({
        Bucket: services.bucketName,
        Key: `${markupObjectPrefix(webpage.id)}thumbnail.png`,
        Body: Buffer.from('png'),
        ContentType: 'image/png',
      }),
    );
    const markups = [(await getItem(pending.id, true)) as MarkupRecord, webpage];
    const gone = async (markupId: string) =>
      (
        await getDb().send(
          new GetCommand({ TableName: getConfig().tableName, Key: { PK: `GONE#${markupId}`, SK: 'GONE' }, ConsistentRead: true }),
        )
      ).Item;

    // The request dies before any job is queued: every send of this process fails.
    await withQueuesCut(() => deleteItemRecords(markups));
    const left = await Promise.all(markups.map((markup) => keysUnder(markupObjectPrefix(markup.id))));
    const recorded = await Promise.all(markups.map((markup) => gone(markup.id)));
    // As if their grace had passed: the records move to the start of the pending-work index.
    for (const markup of markups) await markDeletionQueued(markup.id, 1);
    await sweepPendingWork();

    for (const [index, markup] of markups.entries()) {
      expect(left[index]!.length, markup.type).toBeGreaterThan(0);
      expect(recorded[index], markup.type).toMatchObject({ markupId: markup.id });
      expect(
        await eventually(
          () => keysUnder(markupObjectPrefix(markup.id)),
          (keys) => keys.length === 0,
        ),
        markup.type,
      ).toEqual([]);
      expect(
        await eventually(
          () => gone(markup.id),
          (item) => item === undefined,
        ),
        markup.type,
      ).toBeUndefined();
    }
    expect(await getStorageBreakdown(org.organizationId)).toMatchObject({ pdfs: 0, total: 0 });
  }, 60_000);
});
