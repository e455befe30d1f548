import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { listEvents } from '../../shared/db/events.js';
import { armFault } from '../../shared/db/core/faults.js';
import { getItem, itemKey, PENDING_WORK_PARTITION, type MarkupRecord } from '../../shared/db/items.js';
import { markWorkQueued } from '../../shared/db/pending-work.js';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { sweepPendingWork } from '../../shared/domain/markups/pending-work.js';
import { call, makeOrganization } from '../support/api.js';
import { conversionClients, makePendingMarkup, sendJob, waitUntilDrained, waitUntilReady } from '../support/conversion-jobs.js';
import { makeMarkup, workspaceMarkupIds, workspaceOf } from '../support/items.js';
import { eventually } from '../support/polling.js';
import { makePdf } from '../support/sample-files.js';
import { uploadFile } from '../support/uploads.js';

const clients = conversionClients();
afterAll(() => {
  clients.sqs.destroy();
  clients.s3.destroy();
});

/** The stored item itself, index keys and all. */
async function rawItem(id: string): Promise<Record<string, unknown> | undefined> {
  return (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: itemKey(id), ConsistentRead: true }))).Item;
}

/**
 * A sweep run as if this markup's grace period had passed: its entry moves to the start of the
 * pending-work index (queued at time 1), so the sweep's page of the oldest entries holds it. A sweep
 * run as if every markup's grace had passed read the oldest 200 of the whole run's pending markups,
 * which in a full run need not include this one, and queued all of them again.
 */
async function sweepAsIfLater(markupId: string): Promise<number> {
  await markWorkQueued((await getItem(markupId, true)) as MarkupRecord, 1);
  return sweepPendingWork();
}

const readyEvents = async (workspaceId: string, markupId: string) =>
  (await listEvents(workspaceId)).filter((event) => event.type === 'markup_ready' && event.markupId === markupId);

const pageBytesOf = (markup: MarkupRecord) => markup.document!.pages.reduce((sum, page) => sum + page.image!.filesize, 0);

describe('the pending-work sweep queues the job of a markup whose job was lost between its commit and the enqueue', () => {
  it('converts a PDF markup whose creating request died before queueing its conversion, once the sweep runs', async () => {
    const org = await makeOrganization();
    const bytes = await makePdf([
      { width: 300, height: 300 },
      { width: 200, height: 400 },
    ]);
    const { fileId } = await uploadFile(org.workspaceKey, { bytes, filename: 'lost.pdf', contentType: 'application/pdf' });
    await armFault('before-work-enqueue', org.workspaceId);

    const created = await call('POST', '/markups/from-files', {
      key: org.workspaceKey,
      body: { workspaceId: org.workspaceId, fileIds: [fileId] },
    });
    const [markupId] = [...(await workspaceMarkupIds(org.workspaceId))];
    const committed = await rawItem(markupId!);
    const withinGrace = await sweepPendingWork();
    const untouched = await rawItem(markupId!);
    const queued = await sweepAsIfLater(markupId!);
    const ready = await waitUntilReady(markupId!, 60_000);
    const after = await rawItem(markupId!);

    expect(created.status).toBe(500);
    expect(committed).toMatchObject({ conversionStatus: 'pending', GSI5PK: PENDING_WORK_PARTITION });
    expect(withinGrace).toBeGreaterThanOrEqual(0);
    expect(untouched).not.toHaveProperty('workQueuedAt');
    expect(queued).toBeGreaterThanOrEqual(1);
    expect(ready).toMatchObject({ conversionStatus: 'ready', document: { pageCount: 2 } });
    expect(after).not.toHaveProperty('GSI5PK');
    expect(after).toHaveProperty('workStartedAt');
    expect((await getStorageBreakdown(org.organizationId)).pdfs).toBe(pageBytesOf(ready));
    expect(await readyEvents(org.workspaceId, markupId!)).toHaveLength(1);
  }, 90_000);

  it('leaves alone a markup whose job a run took, and one that is ready', async () => {
    const org = await makeOrganization();
    const bytes = await makePdf([{ width: 100, height: 100 }]);
    const { fileId } = await uploadFile(org.workspaceKey, { bytes, filename: 'normal.pdf', contentType: 'application/pdf' });
    const created = await call('POST', '/markups/from-files', {
      key: org.workspaceKey,
      body: { workspaceId: org.workspaceId, fileIds: [fileId] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    await waitUntilReady(created.body.data.id, 60_000);

    await sweepAsIfLater(created.body.data.id);

    expect(await rawItem(created.body.data.id)).not.toHaveProperty('workQueuedAt');
    expect(await rawItem(created.body.data.id)).not.toHaveProperty('GSI5PK');
  }, 90_000);

  it('a job queued by the sweep and the lost job delivered late convert once: one markup_ready, bytes counted once (5 rounds)', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { org, markup } = await makePendingMarkup(
        clients,
        {
          type: 'pdf',
          bytes: await makePdf([
            { width: 300, height: 200 },
            { width: 300, height: 200 },
          ]),
          filename: `twice-${round}.pdf`,
          mimeType: 'application/pdf',
        },
        { workStartedAt: undefined },
      );

      await Promise.all([sweepAsIfLater(markup.id), sendJob(clients, markup.id)]);
      const ready = await waitUntilReady(markup.id, 60_000);
      await waitUntilDrained(clients, clients.services.queues.conversion.url, 20_000);

      expect(ready.conversionStatus, `round ${round}`).toBe('ready');
      expect((await getStorageBreakdown(org.organizationId)).pdfs, `round ${round}`).toBe(pageBytesOf(ready));
      expect(await readyEvents(org.workspaceId, markup.id), `round ${round}`).toHaveLength(1);
      expect(await rawItem(markup.id), `round ${round}`).not.toHaveProperty('GSI5PK');
    }
  }, 240_000);

  it('queues the thumbnail of a webpage markup whose thumbnail job was lost', async () => {
    const org = await makeOrganization();
    const workspace = await workspaceOf(org.workspaceId);
    const markup = await makeMarkup({
      workspaceId: org.workspaceId,
      organizationId: workspace.organizationId,
      parentFolderId: workspace.rootFolderId,
      url: 'http://127.0.0.1:9/unreachable',
      thumbnailState: 'pending',
      workStartedAt: undefined,
    });

    const before = await rawItem(markup.id);
    await sweepAsIfLater(markup.id);
    // The render queues behind every other page render of a full run on a loaded machine: 90 s, under the test's 120 s.
    const settled = await eventually(
      () => getItem(markup.id, true),
      (current) => (current as MarkupRecord).thumbnailState !== 'pending',
      90_000,
    );

    expect(before).toMatchObject({ GSI5PK: PENDING_WORK_PARTITION });
    expect((settled as MarkupRecord).thumbnailState).not.toBe('pending');
    expect(await rawItem(markup.id)).not.toHaveProperty('GSI5PK');
  }, 120_000);
});
