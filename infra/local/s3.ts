import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { S3Event } from 'aws-lambda';
import S3rver from 's3rver';
import { startS3Front } from './s3-front.js';

export interface LocalS3 {
  /** The front's address: the S3 endpoint every client and every presigned POST uses. */
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * s3rver stores the objects; our front before it refuses what S3 refuses (unsigned or mis-signed
 * requests, presigned-POST policy violations, with the form judged before its file is read), stores
 * tagging s3rver ignores, and emits ObjectCreated notifications shaped like AWS's (s3rver ignores
 * policies and leaves keys unencoded in its own events, so those are not used).
 */
export async function startLocalS3(options: {
  directory: string;
  bucket: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  onObjectCreated: (event: S3Event) => Promise<void>;
}): Promise<LocalS3> {
  mkdirSync(options.directory, { recursive: true });
  const store = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    // Requests reach s3rver through the front, signed for the front's address; the front is where
    // presigned POSTs are verified.
    allowMismatchedSignatures: true,
    directory: options.directory,
    configureBuckets: [{ name: options.bucket }],
  });
  const address = (await store.run()) as AddressInfo;
  const front = await startS3Front({
    port: 0,
    upstreamEndpoint: `http://127.0.0.1:${address.port}`,
    region: options.region,
    credentials: options.credentials,
    onObjectCreated: options.onObjectCreated,
  });
  return {
    endpoint: front.url,
    stop: async () => {
      await front.close();
      await store.close();
    },
  };
}
