import { randomBytes } from 'node:crypto';
import type { S3Event } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as uploadConfirmed } from '../../functions/upload-confirmed/handler.js';
import { releaseExpiredReservations } from '../../shared/db/reservation-sweep.js';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { UPLOAD_POLICY_TTL_SECONDS } from '../../shared/storage/upload-policy.js';
import { localStack, makeOrganization, type Org } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { sqsRecord } from '../support/sqs-events.js';
import {
  completeUpload,
  expireUpload,
  fileForm,
  pngBytes,
  postFileMarkup,
  postToStorage,
  readUploadRecord,
  requestPolicy,
  rootFolderOf,
  storageCounters,
} from '../support/uploads.js';

const { services } = localStack();

/** Policy, post and completion of one file of `bytes`; the status of the step that stopped it. */
async function storeFile(org: Org, folderId: string, bytes: Buffer) {
  const policy = await requestPolicy(org.workspaceKey, {
    resourceType: 'markup_asset',
    resourceId: folderId,
    filename: 'scan.pdf',
    contentType: 'application/pdf',
    filesize: bytes.length,
  });
  if (policy.status !== 200) return { status: policy.status, body: policy.body };
  const posted = await postToStorage(policy.body.data.policy, bytes);
  expect(posted.status, posted.text).toBe(204);
  const completed = await completeUpload(org.workspaceKey, policy.body.data.fileId, posted.etag!);
  return { status: completed.status, body: completed.body, fileId: policy.body.data.fileId as string, etag: posted.etag! };
}

async function limitedOrganization(storageLimitBytes: number) {
  const org = await makeOrganization();
  await setPlan(org.organizationId, { storageLimitBytes });
  return { org, folderId: await rootFolderOf(org.workspaceKey) };
}

/** Runs upload-confirmed on one message of the uploads queue, as Lambda's event source does, and requires it handled. */
async function onObjectCreated(event: S3Event): Promise<void> {
  const result = await uploadConfirmed({ Records: [sqsRecord(JSON.stringify(event), { queue: 'Uploads', region: services.region })] });
  expect(result.batchItemFailures).toEqual([]);
}

/** The S3 notification of an object, as the bucket sends it (at least once). */
function objectCreated(key: string, size: number, etag: string): S3Event {
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: services.region,
        eventTime: new Date().toISOString(),
        eventName: 'ObjectCreated:Post',
        userIdentity: { principalId: 'local' },
        requestParameters: { sourceIPAddress: '127.0.0.1' },
        responseElements: { 'x-amz-request-id': 'local', 'x-amz-id-2': 'local' },
        s3: {
          s3SchemaVersion: '1.0',
          configurationId: 'uploads',
          bucket: { name: services.bucketName, ownerIdentity: { principalId: 'local' }, arn: `arn:aws:s3:::${services.bucketName}` },
          object: { key: encodeURIComponent(key), size, eTag: etag.replaceAll('"', ''), sequencer: '0' },
        },
      },
    ],
  };
}

describe('the storage limit holds (Uploads rule 2; Errors: 402 at the policy step)', () => {
  it('reserves each declared size when its policy is issued, so three 200 KB files under 300,000 bytes store one', async () => {
    const { org, folderId } = await limitedOrganization(300_000);
    const bytes = randomBytes(200_000);

    const policies = [];
    for (let i = 0; i < 3; i += 1) {
      policies.push(
        await requestPolicy(org.workspaceKey, {
          resourceType: 'markup_asset',
          resourceId: folderId,
          filename: `${i}.pdf`,
          contentType: 'application/pdf',
          filesize: bytes.length,
        }),
      );
    }
    const issued = policies.filter((policy) => policy.status === 200);
    for (const policy of issued) {
      const posted = await postToStorage(policy.body.data.policy, bytes);
      await completeUpload(org.workspaceKey, policy.body.data.fileId, posted.etag!);
    }

    expect(policies.map((policy) => policy.status)).toEqual([200, 402, 402]);
    expect(policies[1]!.body).toMatchObject({ type: 'urn:review-board:problem:storage-limit-reached' });
    expect(policies[1]!.body.detail).toContain('200000 reserved');
    expect((await getStorageBreakdown(org.organizationId)).total).toBe(200_000);
  });

  it('never stores more than the limit when uploads are issued and confirmed in parallel (20 rounds)', async () => {
    for (let round = 0; round < 20; round += 1) {
      const { org, folderId } = await limitedOrganization(300_000);
      const bytes = randomBytes(120_000);

      const outcomes = await Promise.all([1, 2, 3].map(() => storeFile(org, folderId, bytes)));

      expect(outcomes.map((outcome) => outcome.status).sort(), `round ${round}`).toEqual([200, 200, 402]);
      expect((await getStorageBreakdown(org.organizationId)).total, `round ${round}`).toBe(240_000);
      expect(await storageCounters(org.organizationId), `round ${round}`).toMatchObject({ reserved: 0, claimed: 240_000 });
    }
  }, 240_000);

  it('holds for POST /markups/file too: parallel files never store more than the limit (20 rounds)', async () => {
    const bytes = Buffer.concat([await pngBytes(), randomBytes(120_000)]);
    for (let round = 0; round < 20; round += 1) {
      const { org } = await limitedOrganization(300_000);

      const answers = await Promise.all(
        [1, 2, 3].map(() => postFileMarkup(org.workspaceKey, fileForm(bytes, 'shot.png', 'image/png'), { workspaceId: org.workspaceId })),
      );

      expect(answers.map((answer) => answer.status).sort(), `round ${round}`).toEqual([200, 200, 402]);
      expect(await storageCounters(org.organizationId), `round ${round}`).toMatchObject({
        total: 2 * bytes.length,
        claimed: 2 * bytes.length,
      });
    }
  }, 240_000);

  it('releases the reservation of a policy that expired unconfirmed, once, so its bytes fit again', async () => {
    const { org, folderId } = await limitedOrganization(300_000);
    const first = await requestPolicy(org.workspaceKey, {
      resourceType: 'markup_asset',
      resourceId: folderId,
      filename: 'a.pdf',
      contentType: 'application/pdf',
      filesize: 200_000,
    });
    const refused = await requestPolicy(org.workspaceKey, {
      resourceType: 'markup_asset',
      resourceId: folderId,
      filename: 'b.pdf',
      contentType: 'application/pdf',
      filesize: 200_000,
    });
    await expireUpload(first.body.data.fileId);

    const after = await Promise.all(
      [1, 2].map(() =>
        requestPolicy(org.workspaceKey, {
          resourceType: 'markup_asset',
          resourceId: folderId,
          filename: 'c.pdf',
          contentType: 'application/pdf',
          filesize: 150_000,
        }),
      ),
    );

    expect(first.status).toBe(200);
    expect(refused.status).toBe(402);
    expect(after.map((answer) => answer.status)).toEqual([200, 200]);
    expect(await storageCounters(org.organizationId)).toMatchObject({ reserved: 300_000, claimed: 300_000, total: 0 });
  });

  it("gives back an unused policy's reservation once the policy can no longer be used, not a day later", async () => {
    const { org, folderId } = await limitedOrganization(300_000);
    const hog = await requestPolicy(org.workspaceKey, {
      resourceType: 'markup_asset',
      resourceId: folderId,
      filename: 'a.pdf',
      contentType: 'application/pdf',
      filesize: 300_000,
    });
    const blocked = await requestPolicy(org.workspaceKey, {
      resourceType: 'markup_asset',
      resourceId: folderId,
      filename: 'b.pdf',
      contentType: 'application/pdf',
      filesize: 1_000,
    });
    const issuedEpoch = Math.floor(Date.parse((await readUploadRecord(hog.body.data.fileId))!.createdAt as string) / 1000);

    // The sweep takes its clock as a parameter, so the policy's end is reached without waiting for it.
    const whileUsable = await releaseExpiredReservations(org.organizationId, issuedEpoch + UPLOAD_POLICY_TTL_SECONDS - 1);
    const afterEnd = await releaseExpiredReservations(org.organizationId, issuedEpoch + UPLOAD_POLICY_TTL_SECONDS + 5 * 60);
    const fits = await requestPolicy(org.workspaceKey, {
      resourceType: 'markup_asset',
      resourceId: folderId,
      filename: 'c.pdf',
      contentType: 'application/pdf',
      filesize: 1_000,
    });

    expect([hog.status, blocked.status]).toEqual([200, 402]);
    expect([whileUsable, afterEnd]).toEqual([0, 1]);
    expect(fits.status).toBe(200);
    expect(await storageCounters(org.organizationId)).toMatchObject({ reserved: 1_000, claimed: 1_000, total: 0 });
  });

  it("keeps a landed upload's reservation past its policy's end, so it confirms and counts once; gives it back at the record's end", async () => {
    const { org, folderId } = await limitedOrganization(1_000_000);
    const bytes = randomBytes(10_000);
    const landed = [];
    for (const name of ['kept.pdf', 'abandoned.pdf']) {
      const policy = await requestPolicy(org.workspaceKey, {
        resourceType: 'markup_asset',
        resourceId: folderId,
        filename: name,
        contentType: 'application/pdf',
        filesize: bytes.length,
      });
      const posted = await postToStorage(policy.body.data.policy, bytes);
      await onObjectCreated(objectCreated(policy.body.data.key, bytes.length, posted.etag!));
      landed.push({
        fileId: policy.body.data.fileId as string,
        etag: posted.etag!,
        record: (await readUploadRecord(policy.body.data.fileId))!,
      });
    }
    const [kept, abandoned] = landed as [(typeof landed)[0], (typeof landed)[0]];
    const issuedEpoch = Math.floor(Date.parse(kept.record.createdAt as string) / 1000);

    const afterPolicyEnd = await releaseExpiredReservations(org.organizationId, issuedEpoch + UPLOAD_POLICY_TTL_SECONDS + 5 * 60);
    const countersBetween = await storageCounters(org.organizationId);
    const completed = await completeUpload(org.workspaceKey, kept.fileId, kept.etag);
    const afterRecordEnd = await releaseExpiredReservations(org.organizationId, (abandoned.record.expiresAtEpoch as number) + 1);
    const late = await completeUpload(org.workspaceKey, abandoned.fileId, abandoned.etag);

    expect(kept.record.landedAt).toBeDefined();
    expect(afterPolicyEnd).toBe(0);
    expect(countersBetween).toMatchObject({ reserved: 20_000, claimed: 20_000, total: 0 });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(afterRecordEnd).toBe(1);
    expect(late.status).toBe(400);
    expect(await storageCounters(org.organizationId)).toMatchObject({ reserved: 0, claimed: 10_000, total: 10_000 });
  });

  it('confirms a landed upload once while a sweep moves its reservation at the same time (20 rounds)', async () => {
    const { org, folderId } = await limitedOrganization(1_000_000);
    const bytes = randomBytes(10_000);
    for (let round = 0; round < 20; round += 1) {
      const policy = await requestPolicy(org.workspaceKey, {
        resourceType: 'markup_asset',
        resourceId: folderId,
        filename: 'a.pdf',
        contentType: 'application/pdf',
        filesize: bytes.length,
      });
      const posted = await postToStorage(policy.body.data.policy, bytes);
      await onObjectCreated(objectCreated(policy.body.data.key, bytes.length, posted.etag!));
      const afterPolicyEnd = Math.floor(Date.now() / 1000) + UPLOAD_POLICY_TTL_SECONDS + 5 * 60;

      const [released, completed] = await Promise.all([
        releaseExpiredReservations(org.organizationId, afterPolicyEnd),
        completeUpload(org.workspaceKey, policy.body.data.fileId, posted.etag!),
      ]);

      expect([released, completed.status], `round ${round}: ${JSON.stringify(completed.body)}`).toEqual([0, 200]);
      expect(await storageCounters(org.organizationId), `round ${round}`).toMatchObject({
        total: (round + 1) * bytes.length,
        reserved: 0,
        claimed: (round + 1) * bytes.length,
      });
    }
  }, 240_000);

  it('counts a confirmation delivered twice once: notification replayed, completions in parallel (20 rounds)', async () => {
    const { org, folderId } = await limitedOrganization(1_000_000);
    const bytes = randomBytes(10_000);
    for (let round = 0; round < 20; round += 1) {
      const policy = await requestPolicy(org.workspaceKey, {
        resourceType: 'markup_asset',
        resourceId: folderId,
        filename: 'a.pdf',
        contentType: 'application/pdf',
        filesize: bytes.length,
      });
      const posted = await postToStorage(policy.body.data.policy, bytes);
      const event = objectCreated(policy.body.data.key, bytes.length, posted.etag!);

      const [, , ...completions] = await Promise.all([
        onObjectCreated(event),
        onObjectCreated(event),
        completeUpload(org.workspaceKey, policy.body.data.fileId, posted.etag!),
        completeUpload(org.orgKey, policy.body.data.fileId, posted.etag!),
      ]);

      expect(completions.map((answer) => answer.status)).toEqual([200, 200]);
      expect(await readUploadRecord(policy.body.data.fileId)).toMatchObject({ state: 'confirmed' });
      expect(await storageCounters(org.organizationId), `round ${round}`).toMatchObject({
        total: (round + 1) * bytes.length,
        reserved: 0,
        claimed: (round + 1) * bytes.length,
      });
    }
  }, 240_000);
});
