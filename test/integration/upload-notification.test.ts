import { randomUUID } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as uploadConfirmed } from '../../functions/upload-confirmed/handler.js';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { put, transact } from '../../shared/db/core/transact.js';
import { uploadKey, uploadObjectKey } from '../../shared/db/uploads.js';
import { localStack } from '../support/api.js';
import { sqsRecord } from '../support/sqs-events.js';

const { services } = localStack();
const s3 = new S3Client({
  region: services.region,
  endpoint: services.endpoints.s3,
  forcePathStyle: true,
  credentials: services.credentials,
});

async function readUpload(fileId: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const item = (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: uploadKey(fileId), ConsistentRead: true })))
      .Item;
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

describe('upload-confirmed on the uploads queue', () => {
  const message = (body: string) => sqsRecord(body, { queue: 'Uploads' });

  it('takes the test event S3 sends when the notification is set up, and fails only the messages that are not notifications', async () => {
    const records = [
      message(JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Time: new Date().toISOString(), Bucket: services.bucketName })),
      message('not json'),
      message(JSON.stringify({ type: 'constructor' })),
      message(JSON.stringify({ Records: [{ eventTime: 'now' }] })),
      message(JSON.stringify({ Records: [] })),
    ];

    const result = await uploadConfirmed({ Records: records });

    expect(result.batchItemFailures).toEqual([1, 2, 3].map((index) => ({ itemIdentifier: records[index]!.messageId })));
  });

  it('leaves alone a notification whose object was deleted before it was read (a late redrive)', async () => {
    const fileId = randomUUID();
    const key = uploadObjectKey(randomUUID(), fileId, 'gone.png');
    await transact([put({ ...uploadKey(fileId), entity: 'Upload', fileId, key })]);
    const notification = {
      Records: [{ eventTime: new Date().toISOString(), s3: { bucket: { name: services.bucketName }, object: { key } } }],
    };

    const result = await uploadConfirmed({ Records: [message(JSON.stringify(notification))] });

    expect(result.batchItemFailures).toEqual([]);
    expect(
      (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: uploadKey(fileId), ConsistentRead: true }))).Item
        ?.landedAt,
    ).toBeUndefined();
  });
});
