import { randomUUID } from 'node:crypto';
import { GetObjectTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { call, localStack, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { makeMarkups } from '../support/markups.js';
import {
  completeUpload,
  pdfBytes,
  pngBytes,
  postToStorage,
  readUploadRecord,
  requestPolicy,
  rootFolderOf,
  uploadFile,
  waitForLanded,
} from '../support/uploads.js';
import { makeMemberKey } from '../support/items.js';

const { services } = localStack();
const s3 = new S3Client({
  region: services.region,
  endpoint: services.endpoints.s3,
  forcePathStyle: true,
  credentials: services.credentials,
});

type Org = Awaited<ReturnType<typeof makeOrganization>>;

async function policyFor(org: Org, overrides: Record<string, unknown> = {}, key = org.workspaceKey) {
  const bytes = (overrides.bytes as Buffer | undefined) ?? (await pngBytes());
  const { bytes: _bytes, ...rest } = overrides;
  const response = await requestPolicy(key, {
    resourceType: 'markup_asset',
    resourceId: await rootFolderOf(org.orgKey, org.workspaceId),
    filename: 'mockup.png',
    contentType: 'image/png',
    filesize: bytes.length,
    ...rest,
  });
  return { response, bytes };
}

describe('POST /uploads/upload-policy (Uploads table; rules 1 and 2)', () => {
  it('issues a presigned POST for exactly one key, size and type, and records the upload as issued with a one-day TTL', async () => {
    const org = await makeOrganization();
    const { response, bytes } = await policyFor(org, { filename: 'home page.png' });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const data = response.body.data;
    expect(data).toMatchObject({ bucket: services.bucketName, acl: 'private' });
    expect(data.key).toBe(`uploads/${org.workspaceId}/${data.fileId}/home page.png`);
    expect(data.policy.url).toBe(`${services.endpoints.s3}/${services.bucketName}`);
    expect(data.policy.fields).toMatchObject({ key: data.key, 'Content-Type': 'image/png', 'x-amz-meta-file-id': data.fileId });
    expect(Object.keys(data.policy.fields)).toEqual(
      expect.arrayContaining(['Policy', 'X-Amz-Signature', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Algorithm']),
    );
    const conditions = JSON.parse(Buffer.from(data.policy.fields.Policy!, 'base64').toString()).conditions;
    expect(conditions).toEqual(
      expect.arrayContaining([
        ['content-length-range', bytes.length, bytes.length],
        ['eq', '$Content-Type', 'image/png'],
        ['eq', '$x-amz-meta-file-id', data.fileId],
        ['eq', '$key', data.key],
      ]),
    );
    expect(data.metadata).toMatchObject({
      fileId: data.fileId,
      resourceType: 'markup_asset',
      workspaceId: org.workspaceId,
      filesize: bytes.length,
    });
    const record = await readUploadRecord(data.fileId);
    expect(record).toMatchObject({
      state: 'issued',
      workspaceId: org.workspaceId,
      organizationId: org.organizationId,
      filesize: bytes.length,
      contentType: 'image/png',
    });
    expect(record!.expiresAtEpoch).toBeGreaterThan(Date.now() / 1000 + 23 * 3600);
    expect(record!.expiresAtEpoch).toBeLessThanOrEqual(Date.now() / 1000 + 24 * 3600);
  });

  it('answers the same operation on /upload-policy without the uploads segment (rule 7)', async () => {
    const org = await makeOrganization();
    const rootFolderId = await rootFolderOf(org.workspaceKey);

    const response = await requestPolicy(
      org.workspaceKey,
      { resourceType: 'markup_asset', resourceId: rootFolderId, filename: 'a.png', contentType: 'image/png', filesize: 10 },
      '/upload-policy',
    );

    expect(response.status).toBe(200);
    expect(response.body.data.key).toMatch(new RegExp(`^uploads/${org.workspaceId}/`));
  });

  it('refuses a file larger than the remaining storage with 402 before issuing anything (rule 2)', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageLimitBytes: 1000 });
    await uploadFile(org.workspaceKey, { bytes: Buffer.alloc(600, 1), filename: 'a.pdf', contentType: 'application/pdf' });

    const tooBig = await policyFor(org, { bytes: Buffer.alloc(401, 1), filename: 'b.pdf', contentType: 'application/pdf' });
    const fits = await policyFor(org, { bytes: Buffer.alloc(400, 1), filename: 'c.pdf', contentType: 'application/pdf' });

    expect(tooBig.response.status).toBe(402);
    expect(tooBig.response.body).toMatchObject({ type: 'urn:review-board:problem:storage-limit-reached' });
    expect(tooBig.response.body.detail).toContain('400 left');
    expect(fits.response.status).toBe(200);
  });

  it('allows any size on an unlimited plan', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageLimitBytes: null });

    const { response } = await policyFor(org, { filesize: 4 * 1024 ** 3 });

    expect(response.status).toBe(200);
  });

  it.each([
    ['an unknown resourceType', { resourceType: 'banner' }, '/body/resourceType'],
    ['a zero filesize', { filesize: 0 }, '/body/filesize'],
    ['a fractional filesize', { filesize: 1.5 }, '/body/filesize'],
    ['a contentType that is not a mime type', { contentType: 'png' }, '/body/contentType'],
    ['an empty filename', { filename: ' ' }, '/body/filename'],
    ['a folder resourceId that is not a UUID', { resourceId: 'root' }, '/body/resourceId'],
  ])('rejects %s with 400', async (_case, overrides, pointer) => {
    const org = await makeOrganization();

    const { response } = await policyFor(org, overrides);

    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ pointer })]);
  });

  it('refuses a markup_asset of a type no markup can be made from, and a non-image avatar', async () => {
    const org = await makeOrganization();

    const text = await policyFor(org, { filename: 'notes.txt', contentType: 'text/plain' });
    const avatar = await policyFor(org, {
      resourceType: 'user_avatar',
      resourceId: org.workspaceKeyUserId,
      filename: 'me.pdf',
      contentType: 'application/pdf',
    });

    expect(text.response.status).toBe(400);
    expect(text.response.body.type).toBe('urn:review-board:problem:unsupported-file-type');
    expect(avatar.response.status).toBe(400);
  });

  describe('checks access per resource type', () => {
    it('markup_asset: 404 for an unknown folder, 403 for a folder of another workspace, 403 for a viewer', async () => {
      const org = await makeOrganization();
      const other = await makeOrganization();

      const unknown = await policyFor(org, { resourceId: randomUUID() });
      const foreign = await policyFor(org, { resourceId: await rootFolderOf(other.workspaceKey) });
      const viewer = await policyFor(org, {}, await makeMemberKey(org.workspaceId, 'viewer'));
      const contributor = await policyFor(org, {}, await makeMemberKey(org.workspaceId, 'contributor'));

      expect(unknown.response.status).toBe(404);
      expect(foreign.response.status).toBe(403);
      expect(viewer.response.status).toBe(403);
      expect(contributor.response.status).toBe(200);
    });

    it('message_attachment and thread_screenshot name a markup of the workspace', async () => {
      const org = await makeOrganization();
      const other = await makeOrganization();
      const [markup] = await makeMarkups(org, 1);
      const [foreignMarkup] = await makeMarkups(other, 1);

      const attachment = await policyFor(org, {
        resourceType: 'message_attachment',
        resourceId: markup!.id,
        filename: 'log.txt',
        contentType: 'text/plain',
      });
      const screenshot = await policyFor(org, { resourceType: 'thread_screenshot', resourceId: markup!.id });
      const foreign = await policyFor(org, {
        resourceType: 'message_attachment',
        resourceId: foreignMarkup!.id,
        filename: 'log.txt',
        contentType: 'text/plain',
      });
      const missing = await policyFor(org, { resourceType: 'annotation_export', resourceId: randomUUID() });

      expect(attachment.response.status).toBe(200);
      expect(attachment.response.body.data.key).toMatch(/\/log\.txt$/);
      expect(screenshot.response.status).toBe(200);
      expect(foreign.response.status).toBe(403);
      expect(missing.response.status).toBe(404);
    });

    it("user_avatar names the caller's own user; external_user_avatar any external id; workspace_icon the workspace (admin)", async () => {
      const org = await makeOrganization();
      const other = await makeOrganization();

      const own = await policyFor(org, { resourceType: 'user_avatar', resourceId: org.workspaceKeyUserId });
      const someoneElse = await policyFor(org, { resourceType: 'user_avatar', resourceId: randomUUID() });
      const external = await policyFor(org, { resourceType: 'external_user_avatar', resourceId: 'customer-42' });
      const icon = await policyFor(org, { resourceType: 'workspace_icon', resourceId: org.workspaceId });
      const foreignIcon = await policyFor(org, { resourceType: 'workspace_icon', resourceId: other.workspaceId });
      const contributorIcon = await policyFor(
        org,
        { resourceType: 'workspace_icon', resourceId: org.workspaceId },
        await makeMemberKey(org.workspaceId, 'contributor'),
      );

      expect(own.response.status).toBe(200);
      expect(someoneElse.response.status).toBe(403);
      expect(external.response.status).toBe(200);
      expect(external.response.body.data.metadata).toMatchObject({ resourceId: 'customer-42', workspaceId: org.workspaceId });
      expect(icon.response.status).toBe(200);
      expect(foreignIcon.response.status).toBe(403);
      expect(contributorIcon.response.status).toBe(403);
    });
  });
});

describe('The storage form post (Uploads rules 1, 3 and 4)', () => {
  it('stores a file posted with every policy field and file last: 204 with an ETag', async () => {
    const org = await makeOrganization();
    const { response, bytes } = await policyFor(org);

    const posted = await postToStorage(response.body.data.policy, bytes, { after: { ignored: 'after the file' } });

    expect(posted.status, posted.text).toBe(204);
    expect(posted.etag).toMatch(/^"[0-9a-f]{32}"$/);
  });

  it.each([
    ['key', { key: 'uploads/elsewhere.png' }, '$key'],
    ['Content-Type', { 'Content-Type': 'image/jpeg' }, '$Content-Type'],
    ['x-amz-meta-file-id', { 'x-amz-meta-file-id': randomUUID() }, '$x-amz-meta-file-id'],
    ['Policy', { Policy: Buffer.from('{"expiration":"2099-01-01T00:00:00Z","conditions":[]}').toString('base64') }, 'Policy'],
    ['X-Amz-Signature', { 'X-Amz-Signature': '0'.repeat(64) }, 'X-Amz-Signature'],
  ])('refuses the whole upload with 403 naming %s when it is altered', async (_field, fields, named) => {
    const org = await makeOrganization();
    const { response, bytes } = await policyFor(org);

    const posted = await postToStorage(response.body.data.policy, bytes, { fields });

    expect(posted.status).toBe(403);
    expect(posted.text).toContain(named);
  });

  it.each(['x-amz-meta-file-id', 'Content-Type', 'X-Amz-Signature'])('refuses with 403 naming %s when it is dropped', async (field) => {
    const org = await makeOrganization();
    const { response, bytes } = await policyFor(org);

    const posted = await postToStorage(response.body.data.policy, bytes, { fields: { [field]: undefined } });

    expect(posted.status).toBe(403);
    expect(posted.text).toContain(field);
  });

  it.each([
    ['one byte more', 1],
    ['one byte less', -1],
  ])('refuses a file with %s than the policy signed', async (_case, delta) => {
    const org = await makeOrganization();
    const { response, bytes } = await policyFor(org);
    const changed = delta > 0 ? Buffer.concat([bytes, Buffer.from([0])]) : bytes.subarray(0, bytes.length - 1);

    const posted = await postToStorage(response.body.data.policy, changed);

    expect(posted.status).toBe(400);
    expect(posted.text).toMatch(/EntityToo(Large|Small)/);
    expect((await readUploadRecord(response.body.data.fileId))?.landedAt).toBeUndefined();
  });
});

describe('POST /uploads/upload-complete (Uploads rule 5; States: policy issued -> confirmed)', () => {
  it('answers 400 before the object landed and 200 after, with the markup_asset shape and the bytes counted', async () => {
    const org = await makeOrganization();
    const { response, bytes } = await policyFor(org, { filename: 'wide.png', bytes: await pngBytes(7, 5) });
    const { fileId, policy } = response.body.data;

    const early = await completeUpload(org.workspaceKey, fileId, '"0123456789abcdef0123456789abcdef"');
    const posted = await postToStorage(policy, bytes);
    const completed = await completeUpload(org.workspaceKey, fileId, posted.etag!);

    expect(early.status).toBe(400);
    expect(early.body.type).toBe('urn:review-board:problem:upload-not-landed');
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(completed.body.data).toEqual({
      id: fileId,
      key: response.body.data.key,
      mimeType: 'image/png',
      filesize: bytes.length,
      originalFilename: 'wide.png',
      resourceType: 'markup_asset',
      resourceId: response.body.data.metadata.resourceId,
      workspaceId: org.workspaceId,
      width: 7,
      height: 5,
    });
    expect(await getStorageBreakdown(org.organizationId)).toMatchObject({ images: bytes.length, total: bytes.length });
    const record = await readUploadRecord(fileId);
    expect(record).toMatchObject({ state: 'confirmed', etag: posted.etag, category: 'images' });
    expect(record!.expiresAtEpoch).toBeUndefined();
  });

  it('confirms from the S3 notification as well as from storage itself, and answers the same twice, counting once', async () => {
    const org = await makeOrganization();
    const bytes = pdfBytes();
    const { response } = await policyFor(org, { bytes, filename: 'spec.pdf', contentType: 'application/pdf' });
    const posted = await postToStorage(response.body.data.policy, bytes);
    await waitForLanded(response.body.data.fileId);

    const first = await completeUpload(org.workspaceKey, response.body.data.fileId, posted.etag!);
    const second = await completeUpload(org.workspaceKey, response.body.data.fileId, posted.etag!, '/upload-complete');

    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await getStorageBreakdown(org.organizationId)).toMatchObject({ pdfs: bytes.length, total: bytes.length });
  });

  it('counts the bytes once when two completions of the same file run in parallel', async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes(9, 9);
    const { fileId, etag } = await uploadFile(org.workspaceKey, { bytes, filename: 'a.png', contentType: 'image/png' }, { confirm: false });

    const answers = await Promise.all([completeUpload(org.workspaceKey, fileId, etag), completeUpload(org.orgKey, fileId, etag)]);

    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(answers[1]!.body).toEqual(answers[0]!.body);
    expect((await getStorageBreakdown(org.organizationId)).total).toBe(bytes.length);
  });

  it('retags the object confirmed so the lifecycle rule for unconfirmed uploads leaves it alone', async () => {
    const org = await makeOrganization();
    const { fileId } = await uploadFile(org.workspaceKey, { bytes: await pngBytes(), filename: 'a.png', contentType: 'image/png' });
    const record = await readUploadRecord(fileId);

    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: services.bucketName, Key: record!.key as string }));

    expect(tags.TagSet).toEqual([{ Key: 'upload-state', Value: 'confirmed' }]);
  });

  it('counts message attachments as attachments whatever their type', async () => {
    const org = await makeOrganization();
    const [markup] = await makeMarkups(org, 1);
    const bytes = await pngBytes();

    await uploadFile(org.workspaceKey, {
      bytes,
      filename: 'shot.png',
      contentType: 'image/png',
      resourceType: 'message_attachment',
      resourceId: markup!.id,
    });

    expect(await getStorageBreakdown(org.organizationId)).toMatchObject({ attachments: bytes.length, images: 0 });
  });

  it("refuses an ETag that is not the stored object's with 400", async () => {
    const org = await makeOrganization();
    const { fileId } = await uploadFile(
      org.workspaceKey,
      { bytes: await pngBytes(), filename: 'a.png', contentType: 'image/png' },
      { confirm: false },
    );

    const wrong = await completeUpload(org.workspaceKey, fileId, '"ffffffffffffffffffffffffffffffff"');

    expect(wrong.status).toBe(400);
    expect(wrong.body.type).toBe('urn:review-board:problem:upload-mismatch');
    expect((await readUploadRecord(fileId))?.state).toBe('issued');
  });

  it('answers 404 for an unknown file id and 403 for an upload of another workspace', async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();
    const { fileId, etag } = await uploadFile(
      other.workspaceKey,
      { bytes: await pngBytes(), filename: 'a.png', contentType: 'image/png' },
      { confirm: false },
    );

    const unknown = await completeUpload(org.workspaceKey, randomUUID(), etag);
    const foreign = await completeUpload(org.workspaceKey, fileId, etag);
    const foreignByOrgKey = await completeUpload(org.orgKey, fileId, etag);

    expect(unknown.status).toBe(404);
    expect(foreign.status).toBe(403);
    expect(foreignByOrgKey.status).toBe(403);
  });
});

describe('Putting the object directly with the policy response (Uploads rule 6)', () => {
  it('lets a storage client PUT the one object with the signed headers, and upload-complete confirms it', async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes(7, 5);
    const root = await rootFolderOf(org.workspaceKey);
    const issued = await requestPolicy(org.workspaceKey, {
      resourceType: 'markup_asset',
      resourceId: root,
      filename: 'direct.png',
      contentType: 'image/png',
      filesize: bytes.length,
    });
    const { directPut, fileId } = issued.body.data;

    const put = await fetch(directPut.url, { method: directPut.method, headers: directPut.headers, body: bytes });
    const completed = await completeUpload(org.workspaceKey, fileId, put.headers.get('etag')!);
    const markup = await call('POST', '/markups/from-files', {
      key: org.workspaceKey,
      body: { workspaceId: org.workspaceId, fileIds: [fileId] },
    });

    expect(directPut.headers).toMatchObject({
      'Content-Type': 'image/png',
      'Content-Length': String(bytes.length),
      'x-amz-meta-file-id': fileId,
    });
    expect(put.status).toBe(200);
    expect(completed.status).toBe(200);
    expect(completed.body.data).toMatchObject({ id: fileId, mimeType: 'image/png', filesize: bytes.length });
    expect(markup.status).toBe(200);
    expect(markup.body.data.images).toHaveLength(1);
  });

  it('does not confirm an object put with another byte count or type than the policy named', async () => {
    const org = await makeOrganization();
    const bytes = await pngBytes(7, 5);
    const root = await rootFolderOf(org.workspaceKey);
    const issued = await requestPolicy(org.workspaceKey, {
      resourceType: 'markup_asset',
      resourceId: root,
      filename: 'direct.png',
      contentType: 'image/png',
      filesize: bytes.length,
    });
    const { directPut, fileId } = issued.body.data;
    const other = Buffer.concat([bytes, Buffer.from('extra')]);

    const put = await fetch(directPut.url, {
      method: 'PUT',
      headers: { ...directPut.headers, 'Content-Length': String(other.length) },
      body: other,
    });
    const completed = await completeUpload(org.workspaceKey, fileId, put.headers.get('etag') ?? '"none"');

    expect(completed.status).toBe(400);
  });
});
