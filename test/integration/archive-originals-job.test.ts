import { randomUUID } from 'node:crypto';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { getS3 } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { PENDING_WORK_GRACE_MS, sweepPendingWork } from '../../shared/domain/markups/pending-work.js';
import { eventually } from '../support/polling.js';
import { withQueuesCut } from '../support/sqs-events.js';
import { getArchiveJob, insertArchiveJob, newArchiveJob } from '../../shared/db/archive-jobs.js';
import { getOriginal } from '../../shared/db/originals.js';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { archiveOriginalsBatch, type ArchiveOriginalsJob } from '../../shared/domain/markups/originals.js';
import { makeOrganization } from '../support/api.js';
import { makeRetainedOriginal } from '../support/fixtures.js';

async function archivedStates(markupIds: string[]): Promise<number> {
  const originals = await Promise.all(markupIds.map((id) => getOriginal(id)));
  return originals.filter((original) => original?.state === 'archived').length;
}

describe('archive jobs page through originals, bounded per invocation, counting each original once (issue 18, item 9)', () => {
  it('archives at most a batch per invocation, names the rest in a continuation, and a redelivered batch counts nothing twice', async () => {
    const org = await makeOrganization();
    const originals = [];
    for (let i = 0; i < 5; i += 1)
      originals.push(await makeRetainedOriginal({ workspaceId: org.workspaceId, organizationId: org.organizationId, filesize: 100 }));
    const ids = originals.map((original) => original.markupId);
    const record = newArchiveJob({ workspaceId: org.workspaceId, includeKept: true, expectedCount: 5 });
    await insertArchiveJob(record);
    const job: ArchiveOriginalsJob = { type: 'archive-originals', jobId: record.jobId, workspaceId: org.workspaceId, includeKept: true };

    const continuation = await archiveOriginalsBatch(job, 2);
    const afterFirst = await archivedStates(ids);
    const redelivered = await archiveOriginalsBatch(job, 2);
    const rest = [];
    for (let next = continuation; next; next = await archiveOriginalsBatch(next, 2)) rest.push(next);
    for (let next = redelivered; next; next = await archiveOriginalsBatch(next, 2)) rest.push(next);
    const finished = await getArchiveJob(record.jobId);

    expect(afterFirst).toBe(2);
    expect(continuation).toMatchObject({ ...job, after: expect.any(String) });
    expect(await archivedStates(ids)).toBe(5);
    expect(finished).toMatchObject({
      jobId: record.jobId,
      workspaceId: org.workspaceId,
      expectedCount: 5,
      archivedCount: 5,
      state: 'done',
    });
    expect((await getStorageBreakdown(org.organizationId)).originals).toBe(0);
  });

  it('counts each original once when a batch and its duplicate run at the same time (20 runs of the race)', async () => {
    const org = await makeOrganization();
    for (let run = 0; run < 20; run += 1) {
      const originals = [];
      for (let i = 0; i < 3; i += 1)
        originals.push(await makeRetainedOriginal({ workspaceId: org.workspaceId, organizationId: org.organizationId, filesize: 10 }));
      const record = newArchiveJob({ workspaceId: org.workspaceId, includeKept: true, expectedCount: 3 });
      await insertArchiveJob(record);
      const job: ArchiveOriginalsJob = { type: 'archive-originals', jobId: record.jobId, workspaceId: org.workspaceId, includeKept: true };
      const chain = async () => {
        for (let next: ArchiveOriginalsJob | undefined = job; next; next = await archiveOriginalsBatch(next, 2));
      };

      await Promise.all([chain(), chain()]);

      expect(await archivedStates(originals.map((original) => original.markupId))).toBe(3);
      expect(await getArchiveJob(record.jobId)).toMatchObject({ archivedCount: 3, state: 'done' });
      expect((await getStorageBreakdown(org.organizationId)).originals).toBe(0);
    }
  }, 120_000);

  it('finishes at once, counting nothing, when the workspace has no retained original', async () => {
    const org = await makeOrganization();
    const record = newArchiveJob({ workspaceId: org.workspaceId, includeKept: false, expectedCount: 0 });
    await insertArchiveJob(record);

    const next = await archiveOriginalsBatch({
      type: 'archive-originals',
      jobId: record.jobId,
      workspaceId: org.workspaceId,
      includeKept: false,
    });

    expect(next).toBeUndefined();
    expect(await getArchiveJob(record.jobId)).toMatchObject({ archivedCount: 0, state: 'done' });
  });

  it('leaves the sweep the deletion of each original an invocation archived but died before queueing (its objects go, none stays)', async () => {
    const org = await makeOrganization();
    const Bucket = getConfig().bucketName;
    const originals = [];
    for (let i = 0; i < 3; i += 1) {
      const original = await makeRetainedOriginal({
        workspaceId: org.workspaceId,
        organizationId: org.organizationId,
        key: `originals/${randomUUID()}/design.psd`,
        filesize: 20,
      });
      await getS3().send(new PutObjectCommand({ Bucket, Key: original.key, Body: Buffer.from('not really a PSD') }));
      originals.push(original);
    }
    const stored = async (key: string) =>
      getS3()
        .send(new HeadObjectCommand({ Bucket, Key: key }))
        .then(
          () => true,
          () => false,
        );
    const record = newArchiveJob({ workspaceId: org.workspaceId, includeKept: true, expectedCount: 3 });
    await insertArchiveJob(record);
    const job: ArchiveOriginalsJob = { type: 'archive-originals', jobId: record.jobId, workspaceId: org.workspaceId, includeKept: true };

    // The invocation dies after archiving, before its deletions are queued: every send of this process fails.
    await withQueuesCut(() => archiveOriginalsBatch(job, 10));
    expect(await archivedStates(originals.map((original) => original.markupId))).toBe(3);
    expect(await Promise.all(originals.map((original) => stored(original.key)))).toEqual([true, true, true]);

    // As if the grace had passed: the sweep queues what was never queued, and the objects go.
    await sweepPendingWork(Date.now() + PENDING_WORK_GRACE_MS + 1000);
    for (const original of originals) {
      expect(
        await eventually(
          () => stored(original.key),
          (present) => !present,
        ),
        original.key,
      ).toBe(false);
    }
  });
});
