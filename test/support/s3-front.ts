import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { startS3Front, type S3Front, type S3FrontOptions } from '../../infra/local/s3-front.js';

/** s3rver only knows its built-in account, so these are the only keys it accepts on proxied requests. */
export const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
export const region = 'us-east-1';

/** An s3rver in a temporary directory behind the S3 front, with a client of the front. */
export interface FrontOnS3rver {
  front: S3Front;
  s3: S3Client;
  close(): Promise<void>;
}

export async function startFrontOnS3rver(options: {
  prefix: string;
  buckets: { name: string; configs?: string[] }[];
  allowMismatchedSignatures?: boolean;
  onObjectCreated?: S3FrontOptions['onObjectCreated'];
}): Promise<FrontOnS3rver> {
  const directory = mkdtempSync(join(tmpdir(), options.prefix));
  const s3rver = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: options.buckets,
    allowMismatchedSignatures: options.allowMismatchedSignatures ?? false,
  });
  const { port } = await s3rver.run();
  const front = await startS3Front({
    port: 0,
    upstreamEndpoint: `http://127.0.0.1:${port}`,
    region,
    credentials,
    onObjectCreated: options.onObjectCreated,
  });
  const s3 = new S3Client({ endpoint: front.url, forcePathStyle: true, region, credentials });
  return {
    front,
    s3,
    close: async () => {
      s3.destroy();
      await front.close();
      await s3rver.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
