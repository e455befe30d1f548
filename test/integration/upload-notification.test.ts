import { randomUUID } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { put, transact } from '../../shared/db/transact.js';
import { uploadKey, uploadObjectKey } from '../../shared/db/uploads.js';
import { localStack } from '../support/api.js';

const { services } = localStack();
const s3 = new S3Client({ region: services.region, endpoint: services.endpoints.s3, forcePathStyle: true, credentials: services.credentials });

async function readUpload(fileId: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const item = (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: uploadKey(fileId), ConsistentRead: true }))).Item;
    if (item?.landedAt || Date.now() > deadline) return item;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('S3 ObjectCreated notifications reach the upload-confirmed function', () => {
  it('records size, ETag and content type of an object under the upload prefix, with a key needing URL-encoding', async () => {
    const workspaceId = randomUUID();
    const fileId = randomUUID();
    const key = uploadObjectKey(workspaceId, fileId, 'mock up + notes é.png');
    await transact([put({ ...uploadKey(fileId), entity: 'Upload', fileId, workspaceId, key })]);
    const bytes = Buffer.from('not really a png, but 42 bytes long ......');

    const stored = await s3.send(new PutObjectCommand({ Bucket: services.bucketName, Key: key, Body: bytes, ContentType: 'image/png' }));
    const upload = await readUpload(fileId);

    expect(upload).toMatchObject({ landedSize: bytes.length, landedEtag: stored.ETag, landedContentType: 'image/png' });
  });
});
