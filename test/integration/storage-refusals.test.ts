import { createHash } from 'node:crypto';
import { GetObjectTaggingCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { localStack, makeOrganization } from '../support/api.js';
import { completeUpload, pngBytes, postToStorage, readUploadRecord, requestPolicy, rootFolderOf } from '../support/uploads.js';

/**
 * Issue 18, item 10, on the running stack: storage refuses what S3 refuses, so an upload can only
 * land, and be confirmed, the ways a policy signed.
 */
const { services } = localStack();
const s3 = new S3Client({
  region: services.region,
  endpoint: services.endpoints.s3,
  forcePathStyle: true,
  credentials: services.credentials,
});

afterAll(() => s3.destroy());

async function issue(workspaceKey: string, bytes: Buffer) {
  const root = await rootFolderOf(workspaceKey);
  const issued = await requestPolicy(workspaceKey, {
    resourceType: 'markup_asset',
    resourceId: root,
    filename: 'a.png',
    contentType: 'image/png',
    filesize: bytes.length,
  });
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  return issued.body.data;
}

const stored = (key: string) =>
  s3.send(new HeadObjectCommand({ Bucket: services.bucketName, Key: key })).then(
    () => true,
    () => false,
  );
const md5Tag = (bytes: Buffer) => `"${createHash('md5').update(bytes).digest('hex')}"`;

describe('storage refuses what S3 refuses (issue 18, item 10)', () => {
  it("refuses an unsigned PUT of a policy's key with 403, so the file never lands and never confirms", async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes();
    const policy = await issue(org.workspaceKey, bytes);

    const put = await fetch(`${policy.policy.url}/${policy.key}`, { method: 'PUT', headers: { 'Content-Type': 'image/png' }, body: bytes });
    const completed = await completeUpload(org.workspaceKey, policy.fileId, md5Tag(bytes));

    expect(put.status).toBe(403);
    expect(await put.text()).toContain('<Code>AccessDenied</Code>');
    expect(await stored(policy.key)).toBe(false);
    expect(completed.status).toBe(400);
    expect((await readUploadRecord(policy.fileId))?.state).toBe('issued');
  });

  it('refuses the presigned PUT with another Content-Type or length with 403, storing nothing', async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes();
    const { directPut, key } = await issue(org.workspaceKey, bytes);
    const longer = Buffer.concat([bytes, Buffer.from('extra')]);

    const otherType = await fetch(directPut.url, {
      method: 'PUT',
      headers: { ...directPut.headers, 'Content-Type': 'text/html' },
      body: bytes,
    });
    const otherLength = await fetch(directPut.url, {
      method: 'PUT',
      headers: { ...directPut.headers, 'Content-Length': String(longer.length) },
      body: longer,
    });

    expect([otherType.status, otherLength.status]).toEqual([403, 403]);
    expect(await otherType.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    expect(await stored(key)).toBe(false);
  });

  it("stores the policy's unconfirmed tag with the object, by form post and by presigned PUT", async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes();
    const posted = await issue(org.workspaceKey, bytes);
    const put = await issue(org.workspaceKey, bytes);

    expect((await postToStorage(posted.policy, bytes)).status).toBe(204);
    expect((await fetch(put.directPut.url, { method: 'PUT', headers: put.directPut.headers, body: bytes })).status).toBe(200);
    const tags = await Promise.all(
      [posted.key, put.key].map((key) => s3.send(new GetObjectTaggingCommand({ Bucket: services.bucketName, Key: key }))),
    );

    expect(tags.map((answer) => answer.TagSet)).toEqual([
      [{ Key: 'upload-state', Value: 'unconfirmed' }],
      [{ Key: 'upload-state', Value: 'unconfirmed' }],
    ]);
  });

  it('refuses a form post whose tagging field differs from the signed one with 403 naming $tagging', async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes();
    const { policy, key } = await issue(org.workspaceKey, bytes);

    const posted = await postToStorage(policy, bytes, { fields: { tagging: '<Tagging><TagSet></TagSet></Tagging>' } });

    expect(posted.status).toBe(403);
    expect(posted.text).toContain('$tagging');
    expect(await stored(key)).toBe(false);
  });
});
